"""The parse stage holds against a commit only what it made: legacy grammar, and a branch's own breakage."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile._parsecheck import parse_findings, targets_python2
from plait.reconcile.gate import Gate

PY2 = "def parse(text):\n    try:\n        return int(text)\n    except ValueError, e:\n        return None\n"
SETUP2 = "from setuptools import setup\nsetup(classifiers=['Programming Language :: Python :: 2.7'])\n"
SETUP3 = "from setuptools import setup\nsetup(python_requires='>=3.8')\n"
CALC = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _merged(box: Sandbox, base: str) -> tuple[str, str, str]:
    """A base, a branch adding a Python 2 module, another editing calc.py, and their two-parent merge."""
    legacy = box.commit({"compat.py": PY2}, parent=base)
    other = box.commit({"calc.py": CALC + "\n\ndef sub(a, b):\n    return a - b\n"}, parent=base)
    union = box.commit({"compat.py": PY2}, parent=other)
    tree = box.git("rev-parse", f"{union}^{{tree}}")
    merge = box.git("commit-tree", tree, "-p", other, "-p", legacy, "-m", "merge")
    return legacy, other, merge


def _check(box: Sandbox, base: str, commit: str) -> tuple[bool, str, str]:
    assert box.repo is not None
    gate = Gate(box.repo, base=base, detect=False)
    result = asyncio.run(gate.check(commit))
    return result.passed, result.stage, result.output


def test_a_python2_file_in_a_project_declaring_python2_is_not_refused(box: Sandbox) -> None:
    base = box.start({"setup.py": SETUP2, "calc.py": CALC})
    legacy, _, merge = _merged(box, base)
    passed, stage, _ = _check(box, base, merge)
    assert passed and stage == "verify"
    assert box.repo is not None
    assert "declares Python 2" in parse_findings(box.repo, base, legacy).notes[0]


def test_a_branch_that_breaks_a_file_on_its_own_is_named_with_the_command_that_shows_it(box: Sandbox) -> None:
    base = box.start({"setup.py": SETUP3, "calc.py": CALC})
    legacy, _, merge = _merged(box, base)
    passed, stage, output = _check(box, base, merge)
    assert not passed and stage == "parse"
    assert f"already in {legacy[:10]} on its own" in output
    assert f"git show {legacy}:compat.py | python3 -c" in output


def test_a_file_broken_at_every_parent_is_not_the_merges_doing(box: Sandbox) -> None:
    base = box.start({"setup.py": SETUP3, "calc.py": CALC})
    one = box.commit({"compat.py": PY2}, parent=base)
    two = box.commit({"compat.py": PY2, "calc.py": CALC + "\nZERO = 0\n"}, parent=base)
    tree = box.git("rev-parse", f"{two}^{{tree}}")
    merge = box.git("commit-tree", tree, "-p", one, "-p", two, "-m", "merge")
    assert box.repo is not None
    found = parse_findings(box.repo, base, merge)
    assert not found.problems and "not the merge's doing" in found.notes[0]
    assert _check(box, base, merge)[0]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": '[project]\nrequires-python = ">=3.8"\n'}, False),
        ({"pyproject.toml": '[project]\nrequires-python = ">=2.7, !=3.0.*"\n'}, True),
        ({"setup.cfg": "[options]\npython_requires = >=2.6\n"}, True),
        ({"tox.ini": "[tox]\nenvlist = py27, py36, pypy\n"}, True),
        ({"tox.ini": "[tox]\nenvlist = py38, pypy3\n"}, False),
        ({"setup.py": SETUP2}, True),
        ({"setup.py": "classifiers=['Programming Language :: Python :: 3']"}, False),
    ],
)
def test_declared_python2(files: dict[str, str], expected: bool) -> None:
    assert targets_python2(files.get) is expected
