"""Acceptance tests for sqlparse_flags_semicolon; copied into the result only after the run."""

import pytest
import sqlparse
import sqlparse.cli
from sqlparse.exceptions import SQLParseError


def _parse(*argv):
    return sqlparse.cli.create_parser().parse_args(["x.sql", *argv])


@pytest.mark.parametrize("flag", ["--comma_first", "--compact"])
def test_bool_flags(flag):
    dest = flag.lstrip("-")
    assert getattr(_parse(), dest) is False
    assert getattr(_parse(flag), dest) is True
    for word in ["true", "True", "YES", "1"]:
        assert getattr(_parse(flag, word), dest) is True
    for word in ["false", "False", "no", "0"]:
        assert getattr(_parse(flag, word), dest) is False
    with pytest.raises(SystemExit) as e:
        _parse(flag, "maybe")
    assert e.value.code == 2


def test_strip_semicolon_format():
    sql = "select 1;\nselect 'a;b' ;"
    assert sqlparse.format(sql, strip_semicolon=True) == "select 1\nselect 'a;b'"
    assert sqlparse.format(sql) == sql
    assert sqlparse.format("select 1 -- a;b\n", strip_semicolon=True) == "select 1 -- a;b\n"


def test_strip_semicolon_validation():
    with pytest.raises(SQLParseError):
        sqlparse.formatter.validate_options({"strip_semicolon": "yes"})


def test_strip_semicolon_cli(tmp_path):
    src = tmp_path / "q.sql"
    out = tmp_path / "out.sql"
    src.write_text("select 1;\n")
    assert _parse("--strip-semicolon").strip_semicolon is True
    assert _parse().strip_semicolon is False
    sqlparse.cli.main([str(src), "--strip-semicolon", "-o", str(out)])
    assert ";" not in out.read_text()
    assert "select 1" in out.read_text()
