"""The merge queue seen from the scheduler: submit one finished task, learn whether it got in."""

from __future__ import annotations

import asyncio

from plait.plan.model import PlanTask
from plait.reconcile.queue import Ejection, MergeQueue, TaskBranch

__all__ = ["QueueIntegrator"]


class QueueIntegrator:
    """Adapts `MergeQueue` to the scheduler's `Integrator`: one call per finished task, answered for it."""

    def __init__(self, queue: MergeQueue) -> None:
        self.queue = queue
        self._outcomes: dict[str, Ejection | None] = {}
        self._lock = asyncio.Lock()

    @property
    def head(self) -> str:
        return self.queue.head

    @property
    def branch(self) -> str:
        return self.queue.branch

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        submitted = TaskBranch(task.id, branch, commit, task.instructions, summary, tuple(task.depends_on))
        self._outcomes.pop(task.id, None)
        await self.queue.submit(submitted)
        # A drain takes every pending branch, so another task's drain may settle this one: the lock
        # makes sure its report is recorded before this call looks for the outcome.
        async with self._lock:
            report = await self.queue.drain()
            for task_id in report.integrated:
                self._outcomes[task_id] = None
            for ejection in report.ejected:
                self._outcomes[ejection.task_id] = ejection
        ejected = self._outcomes.get(task.id)
        if ejected is None:
            return True, ""
        detail = ejected.reason
        if ejected.conflicts:
            detail += "\nconflicting files: " + ", ".join(ejected.conflicts)
        if ejected.output:
            detail += "\n" + ejected.output
        return False, detail
