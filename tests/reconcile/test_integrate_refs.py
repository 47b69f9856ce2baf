"""`plait integrate` reads every branch and --onto in one git call, and still names the one that is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _integrate(box: Sandbox, *argv: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "plait", "integrate", *argv, "--no-llm", "--no-verify", "--json"]
    return subprocess.run(args, cwd=box.root, env=dict(os.environ), capture_output=True, text=True)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["one", "missing"], "branch 'missing'"),
        (["one", "--onto", "nowhere"], "--onto 'nowhere'"),
        (["one", "main..one"], "branch 'main..one'"),
    ],
)
def test_a_wrong_ref_is_named_in_one_line(box: Sandbox, argv: list[str], named: str) -> None:
    base = box.start({"a.py": "A = 1\n"})
    box.branch("one", {"b.py": "B = 1\n"}, parent=base)
    done = _integrate(box, *argv)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], done.stderr


def test_branches_given_twice_and_onto_are_read_right(box: Sandbox) -> None:
    base = box.start({"a.py": "A = 1\n"})
    one = box.branch("one", {"b.py": "B = 1\n"}, parent=base)
    two = box.branch("two", {"c.py": "C = 1\n"}, parent=base)
    done = _integrate(box, "two", "one", "two", "--onto", "main")
    assert done.returncode == 0, done.stderr
    assert '"base": "' + base in done.stdout
    assert done.stdout.index(two) < done.stdout.index(one)
