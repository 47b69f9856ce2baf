"""An attempt's staging (at each checkpoint and at its commit) lists the index's gitlinks and the new nested
repositories in one `ls-files`: three git processes where it took four, with the same files staged."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from noting_git import noting_git
from plait.workspace import Repo


def test_a_commit_stages_in_three_git_processes_and_leaves_nested_repositories_out(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worktree = repo.add_worktree(tmp_path / "wt", "plait/r1/alpha", repo.head())
    (worktree.path / "alpha.py").write_text("def alpha():\n    return 1\n")
    (worktree.path / "new.py").write_text("y = 2\n")
    nested = worktree.path / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=nested, check=True)
    (nested / "x.py").write_text("x = 1\n")
    path, calls = noting_git(tmp_path)
    monkeypatch.setenv("PATH", path)

    sha = worktree.commit_all("alpha returns 1\n")

    assert sha is not None
    assert worktree.changed_files(worktree.base) == ["alpha.py", "new.py"]  # the nested repository left out
    assert _commands(calls)[:4] == ["ls-files", "add", "ls-files", "write-tree"]


def _commands(calls: Path) -> list[str]:
    """The git command of each process, its options (`--no-pager`, `-c name=value`) skipped."""
    found = []
    for line in calls.read_text().splitlines():
        words = iter(line.split())
        for word in words:
            if word == "-c":
                next(words)
            elif not word.startswith("-"):
                found.append(word)
                break
    return found
