"""An attempt's start, logged before its worktree and branch are made: a resumed process makes the same ones.

    decision `worktree` (intended: branch, path, base, the failure before it) ──► `git worktree add`
    ──► `task_started` (done)

A process killed between the two finds the intent in the log, makes the worktree again from the logged base
(clearing what the killed `worktree add` left) and logs `task_started` then. The failure of the attempt
before, which the brief tells of, is taken from the same event, so a resumed agent asks its model exactly
what the first process asked. A fresh run's first attempt logs `task_started` before its worktree is made, its agent
at work meanwhile (`plait.run._early`): a resumed process makes a started attempt's worktree again too.

The git work of the attempts (making worktrees, checkpoints, the commit at the end) runs in `GitThreads`, a thread
per slot of the run, apart from the default pool, where the agents' answers are appended to the log. A few jobs run
at once, the next being the one of the attempt on the longest chain of tasks (`plait.run._ranked`): the critical
path's git work does not wait behind that of attempts with time to spare. A resumed run opens its attempts
again all at once: their worktrees are made a few at a time (`GitThreads.opening`), so that the first is ready,
and its agent at work, while the others are made, instead of every one finishing late on a machine they overload.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

from plait.events.runlog import RunLog
from plait.events.types import TaskStarted, WorktreeOpening
from plait.run._ranked import RankedGate
from plait.run.scheduler import Attempt, rank
from plait.workspace import Repo, Worktree
from plait.workspace._layers import open_layered, remove_bases
from plait.workspace._mounts import can_layer
from plait.workspace._pool import POOLED, adopt, empty, take
from plait.workspace._worktrees import clear_ref_lock, worktree_lock

__all__ = ["GitThreads", "Opening", "log_opening", "log_started", "logged_openings", "make_worktree", "pool_of"]

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_P = ParamSpec("_P")
_T = TypeVar("_T")


@dataclass(frozen=True)
class Opening:
    """Where attempt `attempt` of a task starts, and what it is told of the attempt before it."""

    attempt: int
    branch: str
    path: str
    base: str
    why: str = ""
    """Why the attempt before did not get in ('' for a first attempt)."""
    detail: str = ""

    @property
    def last(self) -> Attempt | None:
        """The failure before this attempt, as its brief tells of it."""
        return Attempt(False, self.why, self.detail) if self.why or self.detail else None


def log_opening(log: RunLog, task_id: str, opening: Opening) -> None:
    """Log that attempt `opening.attempt`'s worktree is about to be made."""
    what = f"making the worktree of attempt {opening.attempt} on {opening.base[:10]}"
    where = {"branch": opening.branch, "path": opening.path, "base": opening.base}
    log.append(
        WorktreeOpening(
            run_id=log.run_id,
            agent=task_id,
            decision=what,
            attempt=opening.attempt,
            **where,
            why=opening.why,
            detail=opening.detail,
        )
    )


def log_started(log: RunLog, task_id: str, title: str, opening: Opening) -> None:
    """Log that the attempt's worktree was made as `opening` says: the attempt has started."""
    started = TaskStarted(
        run_id=log.run_id,
        agent=task_id,
        title=title,
        branch=opening.branch,
        worktree=opening.path,
        base_commit=opening.base,
        attempt=opening.attempt,
    )
    log.append(started)


def logged_openings(log: RunLog) -> dict[tuple[str, int], Opening]:
    """Every attempt's logged start, by (task, attempt)."""
    found: dict[tuple[str, int], Opening] = {}
    for e in log.events(kinds=["opening"]):
        if isinstance(e, WorktreeOpening):
            found[(e.agent, e.attempt)] = Opening(e.attempt, e.branch, e.path, e.base, e.why, e.detail)
    return found


def make_worktree(
    repo: Repo, path: Path, branch: str, base: str, *, fresh: bool, run_id: str, layered: bool = False
) -> Worktree:
    """The attempt's worktree: with `layered`, an overlay over the run's one checkout where plait may mount (see
    `plait.workspace._layers`); else one of the run's pool recycled, else a new one (see `plait.workspace._pool`).

    A resumed process makes it again, whatever a killed one left of it (a half-made worktree too).
    """
    owned = f"plait/{run_id}/"
    pool = pool_of(repo, run_id)
    if layered and can_layer(pool):
        if not fresh:
            with worktree_lock(repo.common_dir):
                repo.drop_worktree(path.absolute())
                clear_ref_lock(repo.common_dir, branch, owned=owned)
        sha = base if _SHA.fullmatch(base) else repo.git("rev-parse", "--verify", f"{base}^{{commit}}").strip()
        # a fresh one is refused when its branch is there (`git branch` without --force): then said below
        made = open_layered(repo, path.absolute(), branch, sha, force=not fresh)
        if made is not None:
            return made
    if fresh and repo.branch_exists(branch):
        return repo.add_worktree(path, branch, base)  # which says the branch is in the way
    if not fresh and not any(pool.glob(f"{POOLED}*")):  # none to recycle: made again, in one drop of what was left
        again = repo.readd_worktree(path, branch, base, owned=owned)
        adopt(again)
        return again
    if not fresh:
        with worktree_lock(repo.common_dir):
            repo.drop_worktree(path.absolute())
            clear_ref_lock(repo.common_dir, branch, owned=owned)
    taken = take(repo, pool, path, branch, base, force=not fresh)
    if taken is not None:
        return taken
    # a recycling that failed may have made the branch already
    made = repo.readd_worktree(path, branch, base, owned=owned) if not fresh or repo.branch_exists(branch) else None
    made = made or repo.add_worktree(path, branch, base)
    adopt(made)
    return made


def pool_of(repo: Repo, run_id: str) -> Path:
    """Where the run's free worktrees wait: its own directory of worktrees, which its clean-up empties."""
    return repo.plait_dir() / "worktrees" / run_id


class GitThreads:
    """Threads for the git work of a run's attempts, one per slot (see the module's docstring); closed, they
    empty the pools of worktrees the attempts handed back once the git work still running has finished."""

    def __init__(self, slots: int, *, opening: int | None = None, at_once: int | None = None) -> None:
        """`opening`: resumed attempts opened at once (one per processor by default); `at_once`: other jobs run at
        once (two per processor by default, so that one waiting for the disk leaves the processor to another)."""
        self._pool = ThreadPoolExecutor(max_workers=max(slots, 1), thread_name_prefix="plait-git")
        self._running: set[Future[object]] = set()
        self._pools: set[tuple[Repo, Path]] = set()
        self._opening = asyncio.Semaphore(opening or os.cpu_count() or 2)
        self._gate = RankedGate(at_once or 2 * (os.cpu_count() or 2))

    async def opening(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """`fn(*args, **kwargs)` in one of the threads, at most one per processor at once: the git work that opens
        a resumed attempt (its worktree made again, its checkpoint restored)."""
        async with self._opening:
            return await asyncio.wrap_future(self._submit(fn, *args, **kwargs))

    async def run(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """`fn(*args, **kwargs)` in one of the threads, once the gate lets the calling attempt's work in."""
        await self._gate.enter(rank())
        try:
            future = self._submit(fn, *args, **kwargs)
        except BaseException:
            self._gate.leave()
            raise
        loop = asyncio.get_running_loop()
        # the place is given back when the job ends, not when its caller stops waiting for it
        future.add_done_callback(lambda _: _soon(loop, self._gate.leave))
        return await asyncio.wrap_future(future)

    def _submit(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
        run_id = kwargs.get("run_id")
        if fn is make_worktree and args and isinstance(args[0], Repo) and isinstance(run_id, str):
            self._pools.add((args[0], pool_of(args[0], run_id)))
        future = self._pool.submit(functools.partial(fn, *args, **kwargs))
        self._running.add(future)  # type: ignore[arg-type]
        future.add_done_callback(self._running.discard)
        return future

    def close(self) -> None:
        """No new work; what runs (a cancelled attempt's last commit) finishes, then the pools are emptied."""
        pending = [future for future in self._running if not future.done()]
        if pending:
            self._pool.submit(self._empty, pending)
        else:
            self._empty([])
        self._pool.shutdown(wait=False)

    def _empty(self, pending: list[Future[object]]) -> None:
        wait(pending)
        for repo, pool in self._pools:
            empty(repo, pool)
            remove_bases(pool)  # those a worktree kept for a resume still uses stay


def _soon(loop: asyncio.AbstractEventLoop, fn: Callable[[], None]) -> None:
    """`fn()` on `loop` from another thread; nothing once the loop has closed (the run is over)."""
    try:
        loop.call_soon_threadsafe(fn)
    except RuntimeError:  # closed
        pass
