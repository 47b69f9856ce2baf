"""What an agent sees of a worktree, and what it can leave there: shared by the tests of the ways a worktree is made
(checked out, recycled from the pool, layered over a shared checkout), which must all look the same."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from plait.workspace import Repo


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Plain git, as an agent would run it in its worktree."""
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=check,
    )
    return done.stdout


def two_commits(tmp_path: Path) -> Repo:
    """A repository of two commits: the second edits, adds and deletes a file."""
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "README.md").write_text("hello\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "src" / "pkg" / "mod.py").write_text("X = 1\n")
    (root / "run.sh").write_text("echo run\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "src" / "pkg" / "mod.py").write_text("X = 2\n")
    (root / "NEW.md").write_text("new\n")
    git(root, "rm", "-q", "run.sh")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two")
    return Repo.discover(root)


def mess_up(path: Path) -> None:
    """What an agent can leave: commits, edits, staged and flagged files, build output, a nested repository,
    a merge in progress, per-worktree refs, a file turned into a directory."""
    (path / "README.md").write_text("changed\n")
    git(path, "commit", "-qam", "agent's work")
    (path / "src" / "app.py").write_text("edited, not committed\n")
    git(path, "update-index", "--assume-unchanged", "src/app.py")
    (path / "src" / "pkg" / "mod.py").unlink()
    (path / "staged.py").write_text("staged\n")
    git(path, "add", "staged.py")
    (path / "notes.txt").write_text("untracked\n")
    (path / "build").mkdir()
    (path / "build" / "out.o").write_text("object\n")
    (path / "debug.log").write_text("log\n")
    (path / "vendor").mkdir()
    git(path / "vendor", "init", "-q")
    (path / "NEW.md").chmod(0o755) if (path / "NEW.md").exists() else None
    git(path, "update-ref", "refs/worktree/mine", "HEAD")
    git(path, "update-ref", "MERGE_HEAD", "HEAD")
    (path / "run.sh").unlink(missing_ok=True)
    (path / "run.sh").mkdir()
    (path / "run.sh" / "inside").write_text("x\n")


def look(path: Path) -> dict[str, object]:
    """Everything an agent sees of a worktree."""
    files: dict[str, tuple[bytes, bool]] = {}
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            if name == ".git":
                continue
            full = Path(root) / name
            files[full.relative_to(path).as_posix()] = (full.read_bytes(), os.access(full, os.X_OK))
    git_path = lambda name: Path(git(path, "rev-parse", "--git-path", name).strip())  # noqa: E731
    return {
        "files": files,
        "status": git(path, "status", "--porcelain", "--ignored", "--untracked-files=all"),
        "head": git(path, "rev-parse", "HEAD"),
        "branch": git(path, "symbolic-ref", "--short", "HEAD"),
        "index": git(path, "ls-files", "-s", "-v"),
        "refs": git(path, "for-each-ref", "refs/worktree/", "refs/bisect/"),
        # a fresh worktree's ORIG_HEAD and reflog tell only of its own checkout, at the base
        "state": [n for n in ("MERGE_HEAD", "rebase-merge", "config.worktree", "info") if git_path(n).exists()],
        "reflog": set(git(path, "reflog", "--format=%H").split()),
        "stashes": git(path, "stash", "list"),
    }


def as_fresh(view: dict[str, object], branch: str) -> dict[str, object]:
    return {**view, "branch": f"{branch}\n"}
