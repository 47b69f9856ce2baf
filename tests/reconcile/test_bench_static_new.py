"""Track B counts as new static breakage only what the integration made: not what was broken at the base."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.reconcile.bench import run_track_b, scratch_clone
from plait.reconcile.ladder import default_resolvers

CALC = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_a_problem_of_the_base_that_an_ejected_branch_would_have_fixed_is_not_new(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC, "old.py": "x = legacy\n", "app.py": "X = 1\n"})
    c1 = box.commit({"calc.py": CALC.replace("a + b", "b + a")}, "one", parent=base)
    fixed = {"calc.py": CALC.replace("a + b", "a + b + 1"), "old.py": "legacy = 1\nx = legacy\n"}
    c2 = box.commit(fixed, "two: fixes old.py", parent=c1)
    c3 = box.commit({"app.py": "X = 2\n"}, "three", parent=c2)
    git(box.root, "update-ref", "refs/heads/main", c3)

    with scratch_clone(box.root) as clone:
        track = run_track_b(clone, name="toy", resolvers=default_resolvers(), k=3, windows=1)

    (window,) = track.windows
    assert (window.git_integrated, window.plait_integrated) == (2, 2)
    assert window.git_new_problems == window.plait_new_problems == ()
