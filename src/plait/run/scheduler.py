"""A DAG executor: tasks start when their dependencies are done, a few at a time, retried alone.

The scheduler knows nothing of agents: it calls `attempt(task, number, last_failure)` and reads
the `Attempt` it returns. A task that keeps failing is dropped, and so are the tasks that
depend on it; every other task goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Attempt", "AttemptFn", "Scheduler", "TaskResult"]


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
        self.slots = asyncio.Semaphore(max(concurrency, 1))
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
                        group.create_task(self._run_task(task, wake), name=f"task {task}")

            while len(self.results) < len(self.deps):
                launch_ready()
                if len(self.results) == len(self.deps):
                    break
                await wake.wait()
                wake.clear()
        return self.results

    async def _run_task(self, task: str, wake: asyncio.Event) -> None:
        first, last = self.resume.get(task, (1, None))
        failures: list[str] = [last.reason] * (first - 1) if last else []
        try:
            for number in range(first, self.max_attempts + 1):
                async with self.slots:
                    self.on_state(task, "running", f"attempt {number}")
                    last = await self._one(task, number, last)
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
