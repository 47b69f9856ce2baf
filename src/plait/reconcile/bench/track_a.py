"""Track A: re-merge the parents of every two-parent merge commit, with plain git and with plait's ladder."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from plait.reconcile._gitio import decode, git_bytes, read_blobs
from plait.reconcile.bench._gated import gate_refusal, merge_base
from plait.reconcile.deterministic import same_content
from plait.reconcile.ladder import merge_commits
from plait.reconcile.textmerge import TreeMerge, merge_tree
from plait.reconcile.types import Resolver
from plait.workspace import GitError, Repo

__all__ = ["MergeCase", "TrackA", "historical_merges", "run_track_a"]

GitResult = Literal["clean_same", "clean_differs", "conflict"]
PlaitResult = Literal["same", "differs", "unresolved", "refused"]


@dataclass(frozen=True)
class MergeCase:
    """One historical merge: what plain git and plait made of its parents, against the committed tree."""

    commit: str
    git: GitResult
    plait: PlaitResult
    conflicted_files: int = 0
    rungs: tuple[str, ...] = ()
    """The rung that resolved each conflicted file plait resolved."""
    unresolved: tuple[str, ...] = ()
    format_only: bool = False
    """When plait's tree differs from the commit: whether only in formatting (same AST, or only whitespace)."""
    refused: str = ""
    """With the gate on: why its parse or semantic stage refused plait's merge (`plait` is then "refused")."""


@dataclass
class TrackA:
    """Every merge case of one repository, and the figures that matter."""

    repo: str
    cases: list[MergeCase] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Merges git itself cannot re-merge (unrelated histories, objects missing from the clone): not counted."""

    def count(self, git: GitResult | None = None, plait: PlaitResult | None = None) -> int:
        """Cases with that git result and that plait result (None: any)."""
        return sum(1 for c in self.cases if git in (None, c.git) and plait in (None, c.plait))

    @property
    def regressions(self) -> list[str]:
        """Merges git reproduced exactly and plait did not: must be empty."""
        return [c.commit for c in self.cases if c.git == "clean_same" and c.plait != "same"]

    def rung_files(self) -> dict[str, int]:
        """Conflicted files resolved, by rung."""
        return dict(Counter(r for c in self.cases for r in c.rungs))

    def summary(self) -> dict[str, object]:
        """The figures as plain data."""
        conflicts = self.count(git="conflict")
        return {
            "repo": self.repo,
            "merges": len(self.cases),
            "skipped_git_cannot_merge": self.skipped,
            "git_clean_same": self.count(git="clean_same"),
            "git_clean_differs": self.count(git="clean_differs"),
            "git_conflicts": conflicts,
            "plait_reproduces_clean_same": self.count(git="clean_same", plait="same"),
            "regressions": self.regressions,
            "plait_clean_differs_fixed": self.count(git="clean_differs", plait="same"),
            "conflicts_resolved_same": self.count(git="conflict", plait="same"),
            "conflicts_resolved_differs": self.count(git="conflict", plait="differs"),
            "conflicts_resolved_differs_in_format_only": sum(
                1 for c in self.cases if c.git == "conflict" and c.plait == "differs" and c.format_only
            ),
            "conflicts_unresolved": self.count(git="conflict", plait="unresolved"),
            "refused_by_gate": self.count(plait="refused"),
            "clean_refused_by_gate": self.count(git="clean_same", plait="refused")
            + self.count(git="clean_differs", plait="refused"),
            "resolved_same_share": round(self.count(git="conflict", plait="same") / conflicts, 3)
            if conflicts
            else None,
            "files_by_rung": self.rung_files(),
        }


def historical_merges(repo: Repo, limit: int | None = None) -> list[tuple[str, str, str, str]]:
    """(merge, committed tree, first parent, second parent) of two-parent merges reachable from HEAD, newest first."""
    _, out = git_bytes(repo, "log", "--merges", "--max-parents=2", "--format=%H %T %P", "HEAD")
    rows = [line.split() for line in out.decode().splitlines() if line.strip()]
    found = [(r[0], r[1], r[2], r[3]) for r in rows if len(r) == 4]
    return found[:limit] if limit else found


async def _case(
    repo: Repo, row: tuple[str, str, str, str], resolvers: Sequence[Resolver], gate: asyncio.Semaphore, gated: bool
) -> MergeCase | str:
    """The merge's case, or its id when git's own merge of its parents fails."""
    merge, committed, ours, theirs = row
    async with gate:
        try:
            plain = await asyncio.to_thread(merge_tree, repo, ours, theirs)
        except GitError:
            return merge  # git's own merge fails: nothing to compare plait with
        return await _compared(repo, row, plain, resolvers, gated)


async def _compared(
    repo: Repo, row: tuple[str, str, str, str], plain: TreeMerge, resolvers: Sequence[Resolver], gated: bool
) -> MergeCase:
    """What plait made of a merge git could make, against git's merge and the committed tree."""
    merge, committed, ours, theirs = row
    outcome = await merge_commits(repo, ours, theirs, resolvers=resolvers, message="bench\n")
    tree, refused = "", ""
    if outcome.commit and gated:
        base = await asyncio.to_thread(merge_base, repo, ours, theirs)
        refused = await gate_refusal(repo, base, outcome.commit)
    if outcome.commit:
        tree = (await asyncio.to_thread(git_bytes, repo, "rev-parse", f"{outcome.commit}^{{tree}}"))[1].decode()
    git: GitResult = "conflict" if not plain.clean else "clean_same" if plain.tree == committed else "clean_differs"
    plait: PlaitResult = "unresolved" if not outcome.commit else "same" if tree.strip() == committed else "differs"
    plait = "refused" if refused else plait
    format_only = plait == "differs" and await asyncio.to_thread(_format_only, repo, committed, tree.strip())
    return MergeCase(
        merge,
        git,
        plait,
        conflicted_files=len(plain.conflicts),
        rungs=tuple(r.rung for r in outcome.resolutions),
        unresolved=tuple(c.path for c in outcome.unresolved),
        format_only=format_only,
        refused=refused,
    )


def _format_only(repo: Repo, committed: str, tree: str) -> bool:
    """Whether two trees differ only in the formatting of files present in both."""
    _, out = git_bytes(repo, "diff-tree", "-r", "-z", "--no-renames", committed, tree)
    fields = out.split(b"\0")
    pairs = []
    for info, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = info.decode().split()
        if len(parts) < 5 or parts[4] != "M":
            return False
        pairs.append((decode(path), parts[2], parts[3]))
    blobs = read_blobs(repo, [oid for _, a, b in pairs for oid in (a, b)])
    return all(same_content(decode(blobs[a]), decode(blobs[b]), path) for path, a, b in pairs)


async def _run(
    repo: Repo, rows: list[tuple[str, str, str, str]], resolvers: Sequence[Resolver], jobs: int, gated: bool
) -> list[MergeCase | str]:
    gate = asyncio.Semaphore(jobs)
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(_case(repo, row, resolvers, gate, gated)) for row in rows]
    return [task.result() for task in tasks]


def run_track_a(
    repo: Repo,
    *,
    name: str,
    resolvers: Sequence[Resolver],
    limit: int | None = None,
    jobs: int = 4,
    gated: bool = False,
) -> TrackA:
    """Re-merge up to `limit` historical merges (newest first) of `repo`; plait writes objects (not refs) to it.

    `gated`: plait's merge must also pass the gate's parse and semantic stages (against the merge base).
    """
    rows = historical_merges(repo, limit)
    found = asyncio.run(_run(repo, rows, resolvers, jobs, gated))
    cases = [case for case in found if isinstance(case, MergeCase)]
    return TrackA(name, cases, [case for case in found if isinstance(case, str)])
