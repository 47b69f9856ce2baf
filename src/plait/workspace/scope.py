"""What names a repository in an event log that many repositories share (a server's)."""

from __future__ import annotations

from plait.workspace.git import Repo

__all__ = ["store_scope"]


def store_scope(repo: Repo) -> str:
    """What names `repo` in a shared store: its first commit, the same in every clone on every machine."""
    roots = repo.git("rev-list", "--max-parents=0", "HEAD", check=False).split()
    return min(roots) if roots else ""
