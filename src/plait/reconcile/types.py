"""The words of reconciliation: a conflict in one file, a resolution, and the `Resolver` rungs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = ["FileConflict", "MergeContext", "MergeOutcome", "Resolution", "Resolver", "Rung"]

Rung = Literal["git", "deterministic", "structured", "llm", "redo"]


@dataclass(frozen=True)
class FileConflict:
    """One path git could not merge. A side is None when the file does not exist there."""

    path: str
    base: str | None
    ours: str | None
    theirs: str | None
    merged: str = ""
    """git's attempt, with conflict markers (diff3 style), when there is one."""


@dataclass(frozen=True)
class MergeContext:
    """Why each side changed what it changed: given to resolvers that can use it (the LLM rung)."""

    ours_task: str = ""
    theirs_task: str = ""
    ours_intent: str = ""
    theirs_intent: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resolution:
    """A conflict-free text for one path (None: the path is deleted), the rung that found it, and why."""

    path: str
    text: str | None
    rung: Rung
    reason: str


class Resolver(Protocol):
    """One rung of the ladder. Returns None when it cannot resolve the conflict (the next rung tries)."""

    rung: Rung

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None: ...


@dataclass
class MergeOutcome:
    """The result of merging `theirs` into `ours`: a commit when every conflict was resolved."""

    ours: str
    theirs: str
    commit: str | None
    clean: bool
    """True when git merged it alone, with no rung needed."""
    resolutions: list[Resolution] = field(default_factory=list)
    unresolved: list[FileConflict] = field(default_factory=list)
    detail: str = ""
