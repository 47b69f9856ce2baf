"""A DAG executor: tasks start when their dependencies are done, a few at a time, retried alone.

The scheduler knows nothing of agents: it calls `attempt(task, number, last_failure)` and reads
the `Attempt` it returns. A task that keeps failing is dropped, and so are the tasks that
depend on it; every other task goes on.

A free slot goes to the waiting attempt on the longest chain of tasks still to run after it (its
critical path), ties in plan order: starting the short branches first lets the long chain wait for a
slot, and the run ends later than it must. The slots are handed out by the run's own loop, after the
tasks a finished one made ready have joined the queue, so that a freed slot can go to them.

An attempt whose own work is done, and which only waits for something else (its turn to merge), gives its slot
back early with `release_slot()`: the slot goes to the next waiting attempt. Not an attempt at a task that others
depend on: it keeps its slot until it is done, for the first of them, which would otherwise wait for a slot behind
the attempts started while it merged (a chain of tasks then ends later than its length says).

The same order holds past the slots: `rank()` tells the work an attempt hands elsewhere (its git work, which
the machine's processors run a few at a time) where the attempt stands, so a link of the critical path does not
wait behind the git work of attempts with time to spare.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["LAST", "Attempt", "AttemptFn", "Rank", "Scheduler", "TaskResult", "rank", "release_slot"]

Rank = tuple[int, int]
"""Where an attempt stands among the run's: minus the length of its task's critical path, then its plan order."""

LAST: Rank = (0, 1 << 62)
"""The rank of work outside any attempt: after every attempt's."""

_RELEASE: contextvars.ContextVar[Callable[[], None]] = contextvars.ContextVar("release_slot")
_RANK: contextvars.ContextVar[Rank] = contextvars.ContextVar("rank", default=LAST)


def rank() -> Rank:
    """The rank of the attempt running in this task (what it starts inherits it); `LAST` outside any attempt."""
    return _RANK.get()


def release_slot() -> None:
    """Give back the slot of the attempt running in this task early; nothing when it holds none, or when it is an
    attempt at a task that others depend on."""
    release = _RELEASE.get(None)
    if release is not None:
        release()


@dataclass(frozen=True)
class Attempt:
    """What one attempt at a task came to; `detail` is shown to the next attempt when it failed."""

    ok: bool
    reason: str = ""
    detail: str = ""
    retry: bool = True
    """False when another attempt cannot help (a spent budget, a user's interrupt)."""


@dataclass
class TaskResult:
    status: Literal["done", "dropped"]
    attempts: int
    reason: str = ""
    failures: list[str] = field(default_factory=list)


AttemptFn = Callable[[str, int, Attempt | None], Awaitable[Attempt]]
StateFn = Callable[[str, str, str], None]
"""Told (task, state, reason) when a task is queued, starts, retries, is done or dropped."""


class Scheduler:
    """Runs `attempt` for every task of a DAG, at most `concurrency` at a time."""

    def __init__(
        self,
        deps: Mapping[str, Sequence[str]],
        attempt: AttemptFn,
        *,
        concurrency: int = 4,
        max_attempts: int = 2,
        wall_s: float | None = None,
        on_state: StateFn | None = None,
        settled: Mapping[str, TaskResult] | None = None,
        resume: Mapping[str, tuple[int, Attempt | None]] | None = None,
    ) -> None:
        """`settled` tasks are not run again; `resume` starts a task at an attempt, knowing the last failure."""
        unknown = {d for ds in deps.values() for d in ds if d not in deps}
        if unknown:
            raise ValueError(f"unknown dependencies: {sorted(unknown)}")
        self.deps = {task: tuple(ds) for task, ds in deps.items()}
        self.attempt = attempt
        self.concurrency = max(concurrency, 1)
        chain = _chains(self.deps)
        self._depended_on = {d for ds in self.deps.values() for d in ds}
        self.priority: dict[str, Rank] = {task: (-chain[task], i) for i, task in enumerate(self.deps)}
        self._free = self.concurrency
        self._queue: list[tuple[Rank, int, asyncio.Future[None]]] = []
        self._asked = 0
        self.max_attempts = max(max_attempts, 1)
        self.wall_s = wall_s
        self.on_state = on_state or (lambda task, state, reason: None)
        self.results: dict[str, TaskResult] = dict(settled or {})
        self.resume = dict(resume or {})

    async def run(self) -> dict[str, TaskResult]:
        """Run every task; returns each one's result once nothing more can start."""
        started: set[str] = set()
        async with asyncio.TaskGroup() as group:
            wake = asyncio.Event()

            def launch_ready() -> None:
                for task, ds in self.deps.items():
                    if task in started or task in self.results:
                        continue
                    dropped = [d for d in ds if self.results.get(d, TaskResult("done", 0)).status == "dropped"]
                    if dropped and all(d in self.results for d in dropped):
                        self._finish(task, TaskResult("dropped", 0, f"depends on dropped task {dropped[0]}"))
                        continue
                    if all(d in self.results and self.results[d].status == "done" for d in ds):
                        started.add(task)
                        group.create_task(self._run_task(task, self._ask(task), wake), name=f"task {task}")

            while len(self.results) < len(self.deps):
                launch_ready()
                if len(self.results) == len(self.deps):
                    break
                self._hand_out()
                await wake.wait()
                wake.clear()
        return self.results

    def _ask(self, task: str) -> asyncio.Future[None]:
        """Queue `task` for a slot; the future is done when the run's loop gives it one."""
        slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._asked += 1
        heapq.heappush(self._queue, (self.priority[task], self._asked, slot))
        return slot

    def _hand_out(self) -> None:
        while self._free and self._queue:
            slot = heapq.heappop(self._queue)[2]
            if not slot.done():  # a cancelled waiter's slot stays free
                self._free -= 1
                slot.set_result(None)

    async def _run_task(self, task: str, slot: asyncio.Future[None], wake: asyncio.Event) -> None:
        first, last = self.resume.get(task, (1, None))
        failures: list[str] = [last.reason] * (first - 1) if last else []
        try:
            for number in range(first, self.max_attempts + 1):
                if number > first:
                    slot = self._ask(task)
                    wake.set()
                try:
                    await slot
                except asyncio.CancelledError:
                    if not slot.cancelled():  # given a slot as the run was being stopped
                        self._free += 1
                    raise
                held = [True]

                def release(held: list[bool] = held) -> None:
                    if held[0]:
                        held[0] = False
                        self._free += 1
                        wake.set()

                _RELEASE.set(release if task not in self._depended_on else _kept)
                _RANK.set(self.priority[task])
                try:
                    self.on_state(task, "running", f"attempt {number}")
                    last = await self._one(task, number, last)
                finally:
                    release()
                if last.ok:
                    self._finish(task, TaskResult("done", number, failures=failures))
                    return
                failures.append(last.reason)
                if not last.retry or number == self.max_attempts:
                    break
                self.on_state(task, "retrying", last.reason)
            reason = f"failed {len(failures)} attempt(s); last: {failures[-1] if failures else 'unknown'}"
            self._finish(task, TaskResult("dropped", len(failures), reason, failures))
        finally:
            wake.set()

    async def _one(self, task: str, number: int, last: Attempt | None) -> Attempt:
        try:
            async with asyncio.timeout(self.wall_s):
                return await self.attempt(task, number, last)
        except TimeoutError:
            return Attempt(False, f"took longer than the task's wall-time limit of {self.wall_s:.0f}s")
        except Exception as exc:  # fault isolation: a crash in one task must not stop the others
            return Attempt(False, f"crashed: {type(exc).__name__}: {exc}")

    def _finish(self, task: str, result: TaskResult) -> None:
        self.results[task] = result
        self.on_state(task, result.status, result.reason)


def _kept() -> None:
    """An early release refused: the slot goes with the task's end to the tasks that depend on it."""


def _chains(deps: Mapping[str, tuple[str, ...]]) -> dict[str, int]:
    """Each task's critical path: the most tasks on a chain from it through its dependants, itself included."""
    dependants: dict[str, list[str]] = {task: [] for task in deps}
    for task, ds in deps.items():
        for d in ds:
            dependants[d].append(task)
    left = {task: len(dependants[task]) for task in deps}
    chain = {task: 1 for task in deps}
    ready = [task for task, n in left.items() if n == 0]
    while ready:  # from the tasks nothing depends on, back to the roots
        task = ready.pop()
        for d in deps[task]:
            chain[d] = max(chain[d], chain[task] + 1)
            left[d] -= 1
            if left[d] == 0:
                ready.append(d)
    return chain
