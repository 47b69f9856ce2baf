"""A resumed attempt's worktree, made again when the run's pool has none to recycle: what the killed process
left is dropped once, and the worktree is as a fresh one would be."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from noting_git import noting_git
from plait.run._opening import make_worktree, pool_of
from plait.workspace import Repo

RUN = "r1"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    root.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        if args[0] == "add":
            (root / "README.md").write_text("hello\n")
        subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e.invalid", *args], cwd=root, check=True)
    return Repo.discover(root)


def test_made_again_in_one_drop_of_what_was_left(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, branch = pool_of(repo, RUN) / "t1", f"plait/{RUN}/t1"
    first = make_worktree(repo, path, branch, repo.head(), fresh=True, run_id=RUN)
    (first.path / "README.md").write_text("changed by the agent\n")
    (first.path / "left.txt").write_text("left behind\n")

    path_with_git, log = noting_git(tmp_path)
    monkeypatch.setenv("PATH", path_with_git)
    again = make_worktree(repo, path, branch, repo.head(), fresh=False, run_id=RUN)

    assert (again.path / "README.md").read_text() == "hello\n"
    assert not (again.path / "left.txt").exists()
    assert again.head() == repo.head()
    calls = log.read_text().splitlines()
    for step in ("worktree unlock", "worktree prune", "worktree remove"):
        assert sum(step in call for call in calls) == 1, calls
