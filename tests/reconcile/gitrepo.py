"""A real temporary git repository whose commits are written without touching its work tree."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from plait.workspace import Repo

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None, input: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.strip()


class Sandbox:
    """A repository with a `main` branch checked out; `commit` builds commits from file maps."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")
        self.repo: Repo | None = None

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def commit(self, files: Mapping[str, str | None], message: str = "change", *, parent: str | None = None) -> str:
        """A commit on top of `parent` (none: a root commit) setting (or, for None, removing) `files`."""
        index = self.root / ".git" / "sandbox-index"
        env = {"GIT_INDEX_FILE": str(index)}
        if parent:
            git(self.root, "read-tree", parent, env=env)
        else:
            index.unlink(missing_ok=True)
            git(self.root, "read-tree", "--empty", env=env)
        for path, text in files.items():
            if text is None:
                git(self.root, "update-index", "--force-remove", "--", path, env=env)
                continue
            blob = git(self.root, "hash-object", "-w", "--stdin", input=text)
            git(self.root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(self.root, "write-tree", env=env)
        index.unlink()
        args = ["commit-tree", tree, *(["-p", parent] if parent else []), "-m", message]
        return git(self.root, *args)

    def branch(self, name: str, files: Mapping[str, str | None], *, parent: str, message: str = "") -> str:
        sha = self.commit(files, message or f"{name}: change", parent=parent)
        git(self.root, "update-ref", f"refs/heads/{name}", sha)
        return sha

    def start(self, files: Mapping[str, str]) -> str:
        """The first commit, on `main`, checked out in the work tree."""
        sha = self.commit(files, "initial")
        git(self.root, "update-ref", "refs/heads/main", sha)
        git(self.root, "reset", "-q", "--hard", "main")
        self.repo = Repo.discover(self.root)
        return sha

    def show(self, commit: str, path: str) -> str:
        return git(self.root, "show", f"{commit}:{path}")

    def state(self) -> tuple[str, str, str]:
        """What a user could see change in the checkout: status, HEAD, and the checked-out branch."""
        return (
            git(self.root, "status", "--porcelain", "--untracked-files=all"),
            git(self.root, "rev-parse", "HEAD"),
            git(self.root, "symbolic-ref", "HEAD"),
        )


def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """A fresh sandbox under `tmp_path`, in a home with no git configuration."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    return Sandbox(tmp_path / "project")
