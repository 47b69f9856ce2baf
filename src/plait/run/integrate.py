"""How finished tasks get into a run's result: the `Integrator` the scheduler calls, through the merge queue or
directly (one agent, nothing to merge with)."""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

from plait.plan_model import Plan, PlanTask
from plait.reconcile.queue import Ejection, MergeQueue, TaskBranch

__all__ = ["DirectIntegrator", "Integrator", "PlannedIntegrator", "QueueIntegrator"]


class Integrator(Protocol):
    """Takes finished task branches into the run's integration branch, verified."""

    @property
    def head(self) -> str: ...

    @property
    def branch(self) -> str: ...

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        """(True, "") when the branch is in the verified integration head; else (False, why, with output)."""
        ...


@runtime_checkable
class PlannedIntegrator(Integrator, Protocol):
    """An integrator that gates by the plan: a task the plan builds on may leave tests failing for its dependents."""

    def planned(self, plan: Plan) -> None:
        """The plan the branches come from: each task's dependents are still to come when it lands."""
        ...

    def owed(self, task_id: str) -> list[str]:
        """The tests integrated work left failing for `task_id` (among others) to make pass, one line each."""
        ...


class DirectIntegrator:
    """A one-agent run: its task branch is the result, with nothing to merge it with."""

    def __init__(self, base: str, branch: str) -> None:
        self._head, self._branch = base, branch

    @property
    def head(self) -> str:
        return self._head

    @property
    def branch(self) -> str:
        return self._branch

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        self._head, self._branch = commit, branch
        return True, ""


class QueueIntegrator:
    """Adapts `MergeQueue` to the scheduler's `Integrator`: one call per finished task, answered for it."""

    def __init__(self, queue: MergeQueue) -> None:
        self.queue = queue
        self._outcomes: dict[str, Ejection | None] = {}
        self._lock = asyncio.Lock()
        self._dependents: dict[str, tuple[str, ...]] = {}

    @property
    def head(self) -> str:
        return self.queue.head

    @property
    def branch(self) -> str:
        return self.queue.branch

    def owed(self, task_id: str) -> list[str]:
        return [
            f"{', '.join(sorted(d.tests))} (left failing by {d.by}; still to land: {', '.join(sorted(d.until))})"
            for d in self.queue.owed_to(task_id)
        ]

    def planned(self, plan: Plan) -> None:
        self._dependents = {t.id: tuple(d.id for d in plan.tasks if t.id in d.depends_on) for t in plan.tasks}

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        submitted = TaskBranch(
            task.id,
            branch,
            commit,
            task.instructions,
            summary,
            tuple(task.depends_on),
            completed_by=self._dependents.get(task.id, ()),
        )
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
