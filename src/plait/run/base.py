"""The commit a run starts from, and the run's id."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from plait.workspace import Repo

__all__ = ["Base", "choose_base", "new_run_id"]


@dataclass(frozen=True)
class Base:
    """The commit a run starts from."""

    commit: str
    ref: str
    snapshot: bool = False
    left_out: tuple[str, ...] = ()
    """Uncommitted paths the run does not see (when not snapshotted)."""


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def choose_base(repo: Repo, *, include_uncommitted: bool) -> Base:
    """HEAD, or a snapshot commit of HEAD plus the uncommitted changes; the user's checkout is not touched."""
    dirty = tuple(repo.dirty_paths())
    if dirty and include_uncommitted:
        return Base(repo.snapshot("plait: snapshot of uncommitted changes"), repo.head_ref(), snapshot=True)
    return Base(repo.head(), repo.head_ref(), left_out=dirty)
