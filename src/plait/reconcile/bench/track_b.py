"""Track B: parallel replay. Each of K consecutive commits becomes one agent's branch made from the same base."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from plait.reconcile._gitio import decode, git_bytes
from plait.reconcile.bench._gated import gate_refusal
from plait.reconcile.bench.static import static_problems
from plait.reconcile.ladder import merge_commits
from plait.reconcile.textmerge import load_conflicts, merge_file, merge_tree, write_tree
from plait.reconcile.types import Resolution, Resolver
from plait.workspace import PLAIT_IDENTITY, Repo

__all__ = ["TrackB", "Window", "run_track_b"]


@dataclass(frozen=True)
class Window:
    """One replay: K branches from `base`, integrated in order by plain git and by plait's ladder."""

    base: str
    k: int
    transplant_conflicts: int
    git_integrated: int
    plait_integrated: int
    git_equal_real: bool
    plait_equal_real: bool
    git_new_problems: tuple[str, ...] = ()
    plait_new_problems: tuple[str, ...] = ()
    rungs: tuple[str, ...] = ()
    plait_refused: tuple[str, ...] = ()
    """With the gate on: why it refused each branch plait merged but left out."""


@dataclass
class TrackB:
    """The windows of one repository at one K."""

    repo: str
    k: int
    windows: list[Window] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """The figures as plain data."""
        w = self.windows
        return {
            "repo": self.repo,
            "k": self.k,
            "windows": len(w),
            "branches": self.k * len(w),
            "transplant_conflicts": sum(x.transplant_conflicts for x in w),
            "git_integrated": sum(x.git_integrated for x in w),
            "plait_integrated": sum(x.plait_integrated for x in w),
            "git_windows_all_in": sum(x.git_integrated == x.k for x in w),
            "plait_windows_all_in": sum(x.plait_integrated == x.k for x in w),
            "git_equal_real": sum(x.git_equal_real for x in w),
            "plait_equal_real": sum(x.plait_equal_real for x in w),
            "git_windows_new_breakage": sum(bool(x.git_new_problems) for x in w),
            "plait_windows_new_breakage": sum(bool(x.plait_new_problems) for x in w),
            "plait_refused_by_gate": sum(len(x.plait_refused) for x in w),
        }


def _git(repo: Repo, *args: str) -> str:
    return git_bytes(repo, *args, env=PLAIT_IDENTITY)[1].decode().strip()


def _commit(repo: Repo, tree: str, *parents: str) -> str:
    return _git(repo, "commit-tree", tree, *(a for p in parents for a in ("-p", p)), "-m", "replay")


def _tree(repo: Repo, commit: str) -> str:
    return _git(repo, "rev-parse", f"{commit}^{{tree}}")


def _transplant(repo: Repo, base: str, before: str, after: str) -> tuple[str, bool]:
    """A commit on `base` with the change before→after; a conflicting change is forced in, theirs winning."""
    if before == base:
        return _commit(repo, _tree(repo, after), base), False
    root = _commit(repo, _tree(repo, before))
    merged = merge_tree(repo, _commit(repo, _tree(repo, base), root), _commit(repo, _tree(repo, after), root))
    if merged.clean:
        return _commit(repo, merged.tree, base), False
    forced = []
    for pc, conflict, _ in load_conflicts(repo, merged):
        text = conflict.theirs
        if conflict.ours is not None and conflict.theirs is not None:
            text, _ = merge_file(conflict.base or "", conflict.ours, conflict.theirs, style="theirs")
        forced.append(Resolution(pc.path, text, "git", "transplant: theirs wins"))
    modes = {pc.path: pc.mode for pc in merged.conflicts}
    return _commit(repo, write_tree(repo, merged.tree, forced, modes), base), True


def _changed(repo: Repo, old: str, new: str) -> set[str]:
    _, out = git_bytes(repo, "diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new)
    return {decode(p) for p in out.split(b"\0") if p}


async def _window(repo: Repo, chain: Sequence[str], resolvers: Sequence[Resolver], gated: bool) -> Window:
    base, k = chain[0], len(chain) - 1
    branches, transplanted = [], 0
    for before, after in zip(chain, chain[1:], strict=False):
        branch, forced = await asyncio.to_thread(_transplant, repo, base, before, after)
        branches.append(branch)
        transplanted += forced
    git_head, git_in = base, 0
    for branch in branches:
        merged = await asyncio.to_thread(merge_tree, repo, git_head, branch)
        if merged.clean:
            git_head, git_in = await asyncio.to_thread(_commit, repo, merged.tree, git_head, branch), git_in + 1
    plait_head, plait_in, rungs, refused = base, 0, list[str](), list[str]()
    for branch in branches:
        outcome = await merge_commits(repo, plait_head, branch, resolvers=resolvers, message="replay\n")
        why = await gate_refusal(repo, base, outcome.commit) if outcome.commit and gated else ""
        if why:
            refused.append(why)
        elif outcome.commit:
            plait_head, plait_in = outcome.commit, plait_in + 1
            rungs.extend(r.rung for r in outcome.resolutions)
    real = chain[-1]
    window = await asyncio.to_thread(
        _score, repo, base, real, k, transplanted, (git_head, git_in), (plait_head, plait_in), rungs
    )
    return replace(window, plait_refused=tuple(refused))


def _score(
    repo: Repo,
    base: str,
    real: str,
    k: int,
    transplanted: int,
    git: tuple[str, int],
    plait: tuple[str, int],
    rungs: list[str],
) -> Window:
    real_tree = _tree(repo, real)
    paths = _changed(repo, base, real) | _changed(repo, base, git[0]) | _changed(repo, base, plait[0])
    # a problem the base already had is not the integration's, even where a branch left out would have fixed it
    known = static_problems(repo, real, paths) | static_problems(repo, base, paths)
    git_new = static_problems(repo, git[0], paths) - known
    plait_new = static_problems(repo, plait[0], paths) - known if plait[0] != git[0] else git_new
    return Window(
        base,
        k,
        transplanted,
        git[1],
        plait[1],
        _tree(repo, git[0]) == real_tree,
        _tree(repo, plait[0]) == real_tree,
        tuple(sorted(git_new)),
        tuple(sorted(plait_new)),
        tuple(rungs),
    )


def first_parent_chain(repo: Repo) -> list[str]:
    """HEAD's first-parent history, oldest first."""
    return _git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()


async def _run(
    repo: Repo, chains: list[list[str]], resolvers: Sequence[Resolver], jobs: int, gated: bool
) -> list[Window]:
    gate = asyncio.Semaphore(jobs)

    async def one(chain: list[str]) -> Window:
        async with gate:
            return await _window(repo, chain, resolvers, gated)

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(chain)) for chain in chains]
    return [task.result() for task in tasks]


def run_track_b(
    repo: Repo,
    *,
    name: str,
    resolvers: Sequence[Resolver],
    k: int = 5,
    windows: int = 30,
    seed: int = 42,
    jobs: int = 4,
    gated: bool = False,
) -> TrackB:
    """Replay `windows` random windows of K first-parent commits (seeded, so runs are comparable).

    `gated`: each of plait's merges must also pass the gate's parse and semantic stages, or its branch is left out.
    """
    chain = first_parent_chain(repo)
    starts = sorted(random.Random(seed).sample(range(len(chain) - k), min(windows, max(len(chain) - k, 0))))
    chains = [chain[i : i + k + 1] for i in starts]
    return TrackB(name, k, asyncio.run(_run(repo, chains, resolvers, jobs, gated)))
