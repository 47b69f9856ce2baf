"""A run's merge queue is made at its first use: asking what a task owes, or whether the integrator gates by the
plan, makes none (a resumed run's agents replay and make their first new calls without it)."""

from __future__ import annotations

from pathlib import Path

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.plan_model import Plan, PlanTask
from plait.reconcile.queue import MergeQueue
from plait.run.integrate import PlannedIntegrator, QueueIntegrator


def test_the_queue_is_made_at_its_first_use_only(tmp_path: Path) -> None:
    made: list[str] = []

    def make() -> MergeQueue:
        made.append("queue")
        raise AssertionError("the merge queue was made before it was needed")

    log = RunLog(SQLiteEventStore(tmp_path / "events.db"), "r1")
    integrator = QueueIntegrator(log, make)
    assert isinstance(integrator, PlannedIntegrator)
    integrator.planned(Plan(mode="parallel", reason="r", tasks=[PlanTask(id="a", title="a", instructions="a")]))
    assert integrator.owed("a") == []
    assert made == []
