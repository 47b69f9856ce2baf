"""A two-branch `plait integrate` runs the git processes it needs and no more: the queue finds its branch and base in
one call, a branch's changes since it forked in one, the ladder both commits in one and asks git once whether a
branch is merged already; the gate reads the files of the commit and of the base in one call, and lists one tree;
what a branch touched (the resolvers' context) is asked only when a conflict needs it.
What it finds is what the separate calls found, where a branch forked more than once too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from noting_git import noting_git
from plait.reconcile._trees import changed_paths, changed_since_fork
from plait.workspace import Repo


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _git_processes(box: Sandbox, tmp_path: Path, *argv: str) -> list[str]:
    """The git command lines `plait integrate ARGV` ran (through a `git` first on PATH that notes each)."""
    path, calls = noting_git(tmp_path)
    env = {**os.environ, "PATH": path}
    done = subprocess.run(
        [sys.executable, "-m", "plait", "integrate", *argv], cwd=box.root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return calls.read_text().splitlines()


def test_a_clean_two_branch_integrate_runs_25_git_processes(box: Sandbox, tmp_path: Path) -> None:
    base = box.start({"a.py": "A = 1\n", "b.py": "B = 2\n"})
    box.branch("one", {"a.py": "A = 10\n"}, parent=base)
    box.branch("two", {"b.py": "from a import A\n\nB = A\n"}, parent=base)
    calls = _git_processes(box, tmp_path, "one", "two", "--no-llm", "--no-verify")
    assert len(calls) <= 25, "\n".join(calls)  # 37, then 30: the gate read the base alone, the queue asked for context
    assert not any(" merge-base " in f" {c} " and "--is-ancestor" not in c for c in calls)


def test_a_branch_merged_already_is_still_told_apart(box: Sandbox, tmp_path: Path) -> None:
    base = box.start({"a.py": "A = 1\n"})
    one = box.branch("one", {"a.py": "A = 10\n"}, parent=base)
    box.branch("two", {"b.py": "B = 2\n"}, parent=one)
    calls = _git_processes(box, tmp_path, "two", "one", "--no-llm", "--no-verify", "--json")
    assert sum("--is-ancestor" in c for c in calls) == 2  # the queue asks for each branch; the ladder, never


def _fork(repo: Repo, head: str, commit: str, base: str) -> dict[str, str]:
    """What the queue found before, in two calls: the merge base git names, then the diff from it."""
    since = repo.git("merge-base", commit, head, check=False).strip() or base
    return changed_paths(repo, since, commit)


def test_changes_since_a_fork_are_those_from_the_merge_base(box: Sandbox) -> None:
    base = box.start({"a.py": "A = 1\n", "b.py": "B = 1\n"})
    assert box.repo is not None
    left = box.commit({"a.py": "A = 2\n"}, parent=base)
    right = box.commit({"b.py": "B = 2\n"}, parent=base)
    cross_left = box.commit({"c.py": "C = 1\n"}, parent=left)
    cross_left = box.git("commit-tree", f"{cross_left}^{{tree}}", "-p", cross_left, "-p", right, "-m", "x")
    cross_right = box.commit({"d.py": "D = 1\n"}, parent=right)
    cross_right = box.git("commit-tree", f"{cross_right}^{{tree}}", "-p", cross_right, "-p", left, "-m", "y")
    alone = box.commit({"e.py": "E = 1\n"})
    cases = [(left, right), (cross_left, cross_right), (cross_right, cross_left), (base, alone), (left, left)]
    for head, commit in cases:
        assert changed_since_fork(box.repo, head, commit, base) == _fork(box.repo, head, commit, base)
    assert changed_since_fork(box.repo, cross_left, cross_right, base)  # two merge bases: the one git names
