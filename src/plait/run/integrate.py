"""How finished tasks get into a run's result: the `Integrator` the scheduler calls, through the merge queue or
directly (one agent, nothing to merge with).

The merge queue (and with it the merge ladder, its resolvers and their prompts) is made when it is first needed:
a resumed run's agents replay and make their first new calls without it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from plait.events.runlog import RunLog
from plait.plan_model import Plan, PlanTask

if TYPE_CHECKING:
    from plait.reconcile._debts import Debt, Debts
    from plait.reconcile.queue import Ejection, MergeQueue

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
    """Adapts `MergeQueue` to the scheduler's `Integrator`: one call per finished task, answered for it.

    `make_queue` makes the queue of the run of `log` when it is first needed (its head, its branch, a task's branch
    to take in); until then, what a task owes is read from the log as the queue would read it."""

    def __init__(self, log: RunLog, make_queue: Callable[[], MergeQueue]) -> None:
        self._log, self._make_queue = log, make_queue
        self._queue: MergeQueue | None = None
        self._debts: Debts | None = None
        self._outcomes: dict[str, Ejection | None] = {}
        self._lock = asyncio.Lock()
        self._dependents: dict[str, tuple[str, ...]] = {}

    @property
    def queue(self) -> MergeQueue:
        """The merge queue, made at its first use."""
        if self._queue is None:
            self._queue = self._make_queue()
        return self._queue

    @property
    def head(self) -> str:
        return self.queue.head

    @property
    def branch(self) -> str:
        return self.queue.branch

    def owed(self, task_id: str) -> list[str]:
        return [
            f"{', '.join(sorted(d.tests))} (left failing by {d.by}; still to land: {', '.join(sorted(d.until))})"
            for d in self._owed_to(task_id)
        ]

    def _owed_to(self, task_id: str) -> list[Debt]:
        if self._queue is not None:
            return self._queue.owed_to(task_id)
        if self._debts is None:
            from plait.reconcile._debts import Debts

            self._debts = Debts(self._log)
        return self._debts.owed_to(task_id)

    def planned(self, plan: Plan) -> None:
        self._dependents = {t.id: tuple(d.id for d in plan.tasks if t.id in d.depends_on) for t in plan.tasks}

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        from plait.reconcile.queue import TaskBranch

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
