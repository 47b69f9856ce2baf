"""The words of reconciliation: a conflict in one file, a resolution, and the `Resolver` rungs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from plait.workspace import Repo

__all__ = [
    "Confidence",
    "FileConflict",
    "Finding",
    "MergeContext",
    "MergeOutcome",
    "MergeSite",
    "Resolution",
    "Resolver",
    "Rung",
]

Rung = Literal["git", "deterministic", "structured", "llm", "redo"]
Confidence = Literal["high", "low"]


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
class MergeSite:
    """Where a merge happens: the repository and the commits merged, for a rung that reads their history."""

    repo: Repo
    ours: str
    theirs: str


@dataclass(frozen=True)
class Finding:
    """A place, merged cleanly by git, that the semantic check says may need a change once conflicts are resolved."""

    path: str
    line: int
    text: str
    """The line itself, to find it again in a text whose lines have moved."""
    message: str
    files: tuple[str, ...] = ()
    """The files involved: where it is used, and where the name was defined."""


@dataclass(frozen=True)
class MergeContext:
    """Why each side changed what it changed: given to resolvers that can use it (the LLM rung)."""

    ours_task: str = ""
    theirs_task: str = ""
    ours_intent: str = ""
    theirs_intent: str = ""
    notes: tuple[str, ...] = ()
    site: MergeSite | None = None
    """The merge itself; the ladder sets it for the `llm` rung."""
    siblings: tuple[FileConflict, ...] = ()
    """The merge's other conflicts still open when the `llm` rung starts (the ladder sets them)."""
    findings: tuple[Finding, ...] = ()
    """The semantic check's findings on git's merge, for the `llm` rung."""


@dataclass(frozen=True)
class Resolution:
    """A conflict-free text for one path (None: the path is deleted), the rung that found it, and why."""

    path: str
    text: str | None
    rung: Rung
    reason: str
    confidence: Confidence = "high"
    """"low" when a rule had to choose (the order of two additions, an unordered list): worth a look."""


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
