"""In a project that declares Python 2, the parse stage notes only errors Python 2 code may give, and holds the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile._parsecheck import parse_findings

SETUP2 = "from setuptools import setup\nsetup(classifiers=['Programming Language :: Python :: 2.7'])\n"
CALC = "def add(a, b):\n    return a + b\n"
PYTHON2 = {
    "a print statement": "print 'hello'\n",
    "except with a comma": "try:\n    pass\nexcept ValueError, e:\n    pass\n",
    "an octal literal": "MODE = 0755\n",
    "a long literal": "BIG = 10L\n",
    "a unicode escape in a byte string": "PATH = 'C:\\Users\\me'\n",
    "a backtick repr": "shown = `1`\n",
}
BROKEN = {
    "a class with no body": "class Empty:\n\nX = 1\n",
    "an unclosed bracket": "values = [1, 2\n",
    "a stray indent": "X = 1\n    Y = 2\n",
}


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _findings(box: Sandbox, text: str) -> tuple[list[str], list[str]]:
    """The problems and notes of a merge whose branch brought `text` on its own, in a Python 2 project."""
    base = box.start({"setup.py": SETUP2, "calc.py": CALC})
    branch = box.commit({"compat.py": text}, parent=base)
    other = box.commit({"calc.py": CALC + "\n\ndef sub(a, b):\n    return a - b\n"}, parent=base)
    union = box.commit({"compat.py": text}, parent=other)
    merge = box.git("commit-tree", box.git("rev-parse", f"{union}^{{tree}}"), "-p", other, "-p", branch, "-m", "m")
    assert box.repo is not None
    found = parse_findings(box.repo, base, merge)
    return found.problems, found.notes


def _verdict(problems: list[str], notes: list[str]) -> str:
    if problems == [] and len(notes) == 1 and "declares Python 2" in notes[0]:
        return "noted"
    return "held" if len(problems) == 1 and "on its own" in problems[0] and notes == [] else "other"


def test_python2_syntax_is_noted_and_an_error_in_python2_too_is_held_against_its_branch(box: Sandbox) -> None:
    verdicts = {label: _verdict(*_findings(box, text)) for label, text in {**PYTHON2, **BROKEN}.items()}
    assert verdicts == {**dict.fromkeys(PYTHON2, "noted"), **dict.fromkeys(BROKEN, "held")}
