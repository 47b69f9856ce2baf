"""Tests a landing left failing for the tasks the plan built on it: who broke them, who must make them pass.

A task that lands while tasks planned to build on it (its dependents) are still to come may break tests
outside its own test files (`Allowance.defer`): they become a debt of those tasks. Each of them that lands
is struck off; the last one to land must leave the tests passing (`due`), unless tasks are planned to
build on it too, to whom the debt passes on. The ledger is logged whole, as a `DebtsChanged`
event, after every change, and read back from the log by a resumed run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from plait.events.runlog import RunLog
from plait.events.types import DebtsChanged, OwedTests

__all__ = ["Debt", "Debts"]


@dataclass
class Debt:
    """`tests` (or `*`, the verify command) that `by` left failing; `until` are the tasks still to land for them."""

    tests: frozenset[str]
    by: str
    until: set[str] = field(default_factory=set)

    def as_json(self) -> dict[str, object]:
        return {"tests": sorted(self.tests), "by": self.by, "until": sorted(self.until)}


class Debts:
    """The debts of the run of `log`, as the log left them."""

    def __init__(self, log: RunLog) -> None:
        self.log = log
        self.debts: list[Debt] = []
        for event in log.events(kinds=["debts"]):
            if isinstance(event, DebtsChanged):
                self.debts = [Debt(frozenset(d.tests), d.by, set(d.until)) for d in event.debts]

    def due(self, task_id: str, completed_by: Sequence[str]) -> frozenset[str]:
        """The tests that must pass once `task_id` lands: debts it is the last to land for, and passes on to no one."""
        if completed_by:
            return frozenset()
        return frozenset(t for d in self.debts if d.until == {task_id} for t in d.tests)

    def owed_to(self, task_id: str) -> list[Debt]:
        """The debts `task_id` is one of the tasks to land for."""
        return [d for d in self.debts if task_id in d.until]

    def landed(self, task_id: str, completed_by: Sequence[str], deferred: Sequence[str]) -> None:
        """`task_id` is integrated, leaving `deferred` tests failing for the tasks in `completed_by`."""
        before = [d.as_json() for d in self.debts]
        kept: list[Debt] = []
        for debt in self.debts:
            if task_id in debt.until:
                debt.until.discard(task_id)
                if not debt.until and completed_by:
                    debt.until = set(completed_by)  # the plan builds on this task too: its dependents inherit
            if debt.until:
                kept.append(debt)
        if deferred:
            kept.append(Debt(frozenset(deferred), task_id, set(completed_by)))
        self.debts = kept
        if [d.as_json() for d in kept] != before:
            shown = "; ".join(f"{', '.join(sorted(d.tests))} for {', '.join(sorted(d.until))}" for d in kept)
            self.log.append(
                DebtsChanged(
                    run_id=self.log.run_id,
                    agent=task_id,
                    decision=f"tests left failing until planned tasks land: {shown}" if kept else "no test owed",
                    debts=[OwedTests.model_validate(d.as_json()) for d in kept],
                )
            )
