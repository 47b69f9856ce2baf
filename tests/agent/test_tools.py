"""The Toolbox on a real git worktree, with real commands; only tool calls are made up."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plait.agent.tools import Toolbox
from plait.agent.toolset import ToolOutcome
from plait.messages import ToolCall
from plait.workspace import LocalShell

APP = """def total(items):
    result = 0
    for item in items:
        result += item
    return result


def average(items):
    return total(items) / len(items)
"""


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "app.py").write_text(APP)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "README.md").write_text("# Demo\nTotal things.\n")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "junk.py").write_text("def total(): pass\n")
    (root / "logo.bin").write_bytes(b"\x89PNG\0\0total\0")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    ident = ["-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *ident, "commit", "-qm", "init"], cwd=root, check=True)
    (root / "untracked.py").write_text("# total pending\n")
    return root


def box(root: Path, **kwargs: Any) -> Toolbox:
    kwargs.setdefault("use_ripgrep", False)
    return Toolbox(root, LocalShell(grace=0.3), **kwargs)


def call(toolbox: Toolbox, name: str, **arguments: Any) -> ToolOutcome:
    return asyncio.run(toolbox.execute(ToolCall(id="c1", name=name, arguments=arguments)))


def ok(toolbox: Toolbox, name: str, **arguments: Any) -> str:
    outcome = call(toolbox, name, **arguments)
    assert not outcome.is_error, outcome.output
    assert not outcome.format_error, outcome.output
    return outcome.output


def error(toolbox: Toolbox, name: str, **arguments: Any) -> str:
    outcome = call(toolbox, name, **arguments)
    assert outcome.is_error, outcome.output
    assert not outcome.format_error
    return outcome.output


def test_specs_offer_every_tool_and_read_only_offers_four(root: Path) -> None:
    specs = box(root).specs()
    names = [s.name for s in specs]
    assert names == ["read_file", "list_files", "search", "edit_file", "write_file", "run", "finish"]
    assert [s.name for s in box(root, read_only=True).specs()] == ["read_file", "list_files", "search", "finish"]
    for spec in specs:
        assert spec.description
        assert spec.parameters["type"] == "object"
        assert "title" not in json.dumps(spec.parameters)
    read = specs[0].parameters
    assert read["required"] == ["path"]
    assert read["properties"]["start_line"]["type"] == "integer"
    # how much one read shows, and how long a command may run, are said in the descriptions
    told = {s.name: s.description for s in box(root, output_limit=9000, command_timeout=60).specs()}
    assert told["read_file"].endswith(
        "One call shows at most 9,000 characters of numbered lines (about 200 lines of typical code)."
    )
    assert told["run"].endswith("Commands are killed after 60 seconds at most.")


def test_read_file_numbers_lines_and_reads_a_range(root: Path) -> None:
    toolbox = box(root)
    text = ok(toolbox, "read_file", path="src/pkg/app.py")
    assert text.splitlines()[0] == "   1| def total(items):"
    assert text.splitlines()[-1] == "   9|     return total(items) / len(items)"
    assert ok(toolbox, "read_file", path="src/pkg/app.py", start_line=2, end_line=3) == (
        "   2|     result = 0\n   3|     for item in items:"
    )
    assert ok(toolbox, "read_file", path=str(root / "README.md")) == "   1| # Demo\n   2| Total things."
    assert "is empty" in ok(toolbox, "read_file", path="src/pkg/__init__.py")


def test_read_file_caps_long_files_and_says_how_to_go_on(root: Path) -> None:
    (root / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    text = ok(box(root, output_limit=1000), "read_file", path="long.txt")
    assert len(text) <= 1100
    assert text.startswith("   1| line 1\n")
    last = text.splitlines()[-2]
    shown = int(last.split("|")[0])
    assert f"showing lines 1-{shown} of 5000" in text
    assert f"start_line={shown + 1}" in text
    assert ok(box(root), "read_file", path="long.txt", start_line=4999).endswith("5000| line 5000")


def test_read_file_errors(root: Path) -> None:
    toolbox = box(root)
    assert "file not found" in error(toolbox, "read_file", path="nope.py")
    assert "is a directory" in error(toolbox, "read_file", path="src")
    assert "binary file" in error(toolbox, "read_file", path="logo.bin")
    assert "past the end" in error(toolbox, "read_file", path="README.md", start_line=10)


def test_list_files_respects_gitignore_and_skips_git(root: Path) -> None:
    toolbox = box(root)
    assert ok(toolbox, "list_files").splitlines() == [
        ".gitignore",
        "README.md",
        "logo.bin",
        "src/pkg/__init__.py",
        "src/pkg/app.py",
        "untracked.py",
    ]
    assert ok(toolbox, "list_files", pattern="*.py").splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/app.py",
        "untracked.py",
    ]
    assert ok(toolbox, "list_files", pattern="src/**/app.py").splitlines() == ["src/pkg/app.py"]
    assert ok(toolbox, "list_files", pattern="*.{md,bin}").splitlines() == ["README.md", "logo.bin"]
    assert ok(toolbox, "list_files", path="src", pattern="pkg/*").splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/app.py",
    ]
    assert ok(toolbox, "list_files", path="src", pattern="src/pkg/a*.py").splitlines() == ["src/pkg/app.py"]
    assert "no files match" in ok(toolbox, "list_files", pattern="*.rs")


def test_list_files_caps_a_long_listing(root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(500):
        (many / f"file_{i:03}.txt").write_text("")
    text = ok(box(root, output_limit=1000), "list_files", path="many")
    assert len(text) <= 1000
    assert text.startswith("many/file_000.txt\n")
    assert "more files not shown" in text


def test_list_files_without_git_walks_and_skips_git_dirs(tmp_path: Path) -> None:
    (tmp_path / "a" / ".git").mkdir(parents=True)
    (tmp_path / "a" / ".git" / "config").write_text("")
    (tmp_path / "a" / "b.txt").write_text("")
    (tmp_path / "c.txt").write_text("")
    assert ok(box(tmp_path), "list_files").splitlines() == ["a/b.txt", "c.txt"]


def test_list_files_errors(root: Path) -> None:
    assert "directory not found" in error(box(root), "list_files", path="nowhere")
    assert "is a file" in error(box(root), "list_files", path="README.md")


def test_search_in_python_skips_binary_ignored_and_git(root: Path) -> None:
    toolbox = box(root, use_ripgrep=False)
    assert ok(toolbox, "search", pattern=r"def \w+\(").splitlines() == [
        "src/pkg/app.py:1: def total(items):",
        "src/pkg/app.py:8: def average(items):",
    ]
    assert ok(toolbox, "search", pattern="total", glob="*.md") == "no matches for 'total' in the repository."
    assert ok(toolbox, "search", pattern="total", glob="*.md", ignore_case=True) == "README.md:2: Total things."
    assert ok(toolbox, "search", pattern="pending") == "untracked.py:1: # total pending"
    assert ok(toolbox, "search", pattern="result", path="src/pkg/app.py").splitlines()[0] == (
        "src/pkg/app.py:2:     result = 0"
    )


def test_search_caps_many_matches(root: Path) -> None:
    (root / "big.txt").write_text("match me\n" * 5000)
    text = ok(box(root, output_limit=500), "search", pattern="match")
    assert len(text) <= 500
    assert "more matches not shown" in text


def test_search_errors(root: Path) -> None:
    toolbox = box(root)
    assert "invalid regular expression" in error(toolbox, "search", pattern="def total(")
    assert "not found" in error(toolbox, "search", pattern="x", path="nowhere")


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_search_with_ripgrep(root: Path) -> None:
    toolbox = box(root, use_ripgrep=True)
    assert ok(toolbox, "search", pattern=r"def \w+\(").splitlines() == [
        "src/pkg/app.py:1: def total(items):",
        "src/pkg/app.py:8: def average(items):",
    ]
    assert "ignored" not in ok(toolbox, "search", pattern="total")
    assert "invalid regular expression" in error(toolbox, "search", pattern="def total(")


def test_edit_file_replaces_one_exact_occurrence(root: Path) -> None:
    text = ok(box(root), "edit_file", path="src/pkg/app.py", old="    result = 0\n", new="    result = 0.0\n")
    assert "replaced 1 occurrence at line 2" in text
    assert "   2|     result = 0.0" in text
    assert (root / "src/pkg/app.py").read_text() == APP.replace("result = 0\n", "result = 0.0\n")


def test_edit_file_not_found_shows_the_closest_lines(root: Path) -> None:
    text = error(box(root), "edit_file", path="src/pkg/app.py", old="  for itm in items:\n", new="x")
    assert "not found" in text
    assert "   3|     for item in items:" in text
    assert (root / "src/pkg/app.py").read_text() == APP


def test_edit_file_with_several_matches_says_where(root: Path) -> None:
    toolbox = box(root)
    text = error(toolbox, "edit_file", path="src/pkg/app.py", old="items", new="values")
    assert "occurs 5 times" in text
    assert "lines 1, 3, 8, 9, 9" in text
    assert "replaced 5 occurrences" in ok(
        toolbox, "edit_file", path="src/pkg/app.py", old="items", new="values", replace_all=True
    )
    assert "items" not in (root / "src/pkg/app.py").read_text()


def test_edit_file_errors(root: Path) -> None:
    toolbox = box(root)
    assert "write_file" in error(toolbox, "edit_file", path="src/pkg/app.py", old="", new="x")
    assert "write_file" in error(toolbox, "edit_file", path="new.py", old="a", new="b")
    assert "same" in error(toolbox, "edit_file", path="README.md", old="Demo", new="Demo")


def test_edit_file_keeps_windows_line_endings(root: Path) -> None:
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    ok(box(root), "edit_file", path="crlf.txt", old="one\ntwo\n", new="1\n2\n")
    assert (root / "crlf.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_write_file_creates_parents_and_reports(root: Path) -> None:
    toolbox = box(root)
    text = ok(toolbox, "write_file", path="docs/new/guide.md", content="a\nb\n")
    assert text == "created docs/new/guide.md: 4 bytes, 2 lines."
    assert (root / "docs/new/guide.md").read_text() == "a\nb\n"
    assert ok(toolbox, "write_file", path="docs/new/guide.md", content="é").startswith("overwrote")
    assert "is a directory" in error(toolbox, "write_file", path="docs", content="x")


def test_run_reports_exit_code_and_output_in_the_root(root: Path) -> None:
    toolbox = box(root)
    assert ok(toolbox, "run", command="pwd") == f"exit code 0\n{root}\n"
    assert ok(toolbox, "run", command="echo oops >&2; exit 2") == "exit code 2\noops\n"


def test_run_timeout_is_capped_by_the_command_timeout(root: Path) -> None:
    outcome = call(box(root, command_timeout=0.5), "run", command="echo begun; sleep 30", timeout=100)
    assert outcome.is_error
    assert outcome.output == "timed out after 0.5s, process tree killed\nbegun\n"


def test_finish_ends_the_task(root: Path) -> None:
    outcome = call(box(root, read_only=True), "finish", summary="Did it.")
    assert outcome.finished
    assert outcome.summary == "Did it."
    assert not outcome.is_error


def test_unknown_tool_is_a_format_error_listing_the_tools(root: Path) -> None:
    outcome = call(box(root), "delete_everything", path="x")
    assert outcome.format_error
    assert "unknown tool 'delete_everything'" in outcome.output
    assert "read_file, list_files, search, edit_file, write_file, run, finish" in outcome.output
    readonly = call(box(root, read_only=True), "write_file", path="x", content="y")
    assert readonly.format_error
    assert "read-only" in readonly.output
    assert not (root / "x").exists()


def test_bad_json_is_a_format_error_quoting_the_text(root: Path) -> None:
    raw = '{"path": "README.md", ' + "x" * 500
    outcome = asyncio.run(box(root).execute(ToolCall.parse("c1", "read_file", raw)))
    assert outcome.format_error
    assert '{"path": "README.md", xxx' in outcome.output
    assert "more characters" in outcome.output
    assert len(outcome.output) < 400


def test_missing_or_invalid_arguments_are_format_errors_naming_them(root: Path) -> None:
    missing = call(box(root), "read_file")
    assert missing.format_error
    assert "'path' is missing" in missing.output
    invalid = call(box(root), "read_file", path="README.md", start_line="first")
    assert invalid.format_error
    assert "'start_line'" in invalid.output
    assert "'command' is missing" in call(box(root), "run", cmd="ls").output


def test_extra_arguments_are_ignored_and_numbers_are_not_guessed_from_strings(root: Path) -> None:
    shown = ok(box(root), "read_file", path="README.md", start_line=2, reason="curious")
    assert shown.endswith("\n   2| Total things.") and "'reason' ignored" in shown  # run, and the model told
    outcome = call(box(root), "read_file", path="README.md", start_line="2")
    assert outcome.format_error and "'start_line' must be an integer" in outcome.output


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"path": "../outside.txt"}),
        ("read_file", {"path": ".git/config"}),
        ("list_files", {"path": "/etc"}),
        ("search", {"pattern": "root", "path": "/etc"}),
        ("write_file", {"path": "/tmp/plait-escape.txt", "content": "x"}),
        ("edit_file", {"path": "../outside.txt", "old": "a", "new": "b"}),
    ],
)
def test_escapes_are_error_observations(root: Path, name: str, arguments: dict[str, Any]) -> None:
    (root.parent / "outside.txt").write_text("a")
    outcome = call(box(root), name, **arguments)
    assert outcome.is_error
    assert not outcome.format_error
    assert "worktree" in outcome.output or ".git" in outcome.output
    assert (root.parent / "outside.txt").read_text() == "a"
    assert not Path("/tmp/plait-escape.txt").exists()


def test_a_symlink_out_cannot_be_read_or_searched(root: Path) -> None:
    (root.parent / "secret.txt").write_text("password = hunter2\n")
    (root / "leak.txt").symlink_to(root.parent / "secret.txt")
    toolbox = box(root)
    assert "outside the worktree" in error(toolbox, "read_file", path="leak.txt")
    assert ok(toolbox, "search", pattern="hunter") == "no matches for 'hunter' in the repository."


def test_text_that_cannot_be_encoded_is_a_malformed_call(root: Path) -> None:
    outcome = call(box(root), "write_file", path="bad.txt", content="lone \ud800 surrogate")
    assert (
        outcome.format_error and "the content contains an unpaired surrogate \\ud800; use valid UTF-8" in outcome.output
    )
    outcome = call(box(root), "read_file", path="bad\ud800.txt")
    assert outcome.format_error and "the path contains an unpaired surrogate \\ud800" in outcome.output
