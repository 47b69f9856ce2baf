"""Undefined names and what Python provides: the builtins of the project's Python, the module's and the class's
own names, and reads nobody runs (TYPE_CHECKING blocks, annotations left unevaluated, lines marked noqa)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile._undefined import unbound_names
from plait.reconcile.semantic import find_breakage

SETUP_2 = "setup(classifiers=['Programming Language :: Python :: 2.7', 'Programming Language :: Python :: 3'])\n"
SETUP_3 = "setup(classifiers=['Programming Language :: Python :: 3'])\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def unbound(source: str, *, python2: bool = False) -> list[tuple[str, int]]:
    return [(u.name, u.line) for u in unbound_names(dedent(source), python2=python2)]


def test_builtins_module_and_class_names_are_bound() -> None:
    source = """\
        print(len(__file__), __name__, __doc__, __spec__, __path__, __debug__, WindowsError, anext)

        class Thing:
            where = __module__, __qualname__

            def kind(self):
                return __class__, super().__init__, unicode
        """
    assert unbound(source) == [("unicode", 7)]
    assert unbound(source, python2=True) == []


@pytest.mark.parametrize("setup", [SETUP_2, SETUP_3])
def test_the_gate_reads_python2_builtins_only_where_the_project_declares_python2(box: Sandbox, setup: str) -> None:
    base = box.start({"setup.py": setup, "text.py": "X = 1\n"})
    assert box.repo is not None
    combined = box.commit({"text.py": "def text(b):\n    return unicode(b, 'utf-8')\n"}, parent=base)
    found = [str(b).split(" (")[0] for b in find_breakage(box.repo, base, combined)]
    assert found == ([] if setup == SETUP_2 else ["text.py:2: undefined name 'unicode'"])


def test_a_python2_file_this_interpreter_cannot_parse_is_not_judged(box: Sandbox) -> None:
    base = box.start({"setup.py": SETUP_2, "text.py": "X = 1\n"})
    assert box.repo is not None
    combined = box.commit({"text.py": "print 'hello', missing\n", "new.py": "print(fresh)\n"}, parent=base)
    found = [str(b).split(" (")[0] for b in find_breakage(box.repo, base, combined)]
    assert found == ["new.py:1: undefined name 'fresh'"]


def test_type_checking_blocks_and_unevaluated_annotations_are_not_reads() -> None:
    lazy = dedent(
        """\
        from __future__ import annotations
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            reveal_type(Unknown)

        def load(path: Path) -> Config:
            size: Width = 3
            return size

        limit: Height = 3
        """
    )
    assert unbound(lazy) == []
    evaluated = lazy.replace("from __future__ import annotations\n", "")
    assert unbound(evaluated) == [("Config", 6), ("Path", 6), ("Height", 10)]


def test_a_line_marked_noqa_for_undefined_names_is_not_judged() -> None:
    source = """\
        tags.add("x")  # noqa: F821 (injected by the tool that runs this file)
        print(app)  # NoQA
        print(other)  # noqa: E501
        """
    assert unbound(source) == [("other", 3)]


def test_python2_builtins_under_a_test_of_the_version_are_not_judged() -> None:
    source = """\
        import sys

        PY2 = sys.version_info[0] == 2
        if PY2:
            range_type = xrange
            text_type = unicode
        else:
            range_type = range
        if sys.version_info >= (3,):
            joined = "".join
        number = long if not PY2 else int
        buffered = buffer
        """
    assert unbound(source) == [("buffer", 12)]
