"""How a parallel run's end is logged: the tasks it went on without, then its last word and why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from plait.events.runlog import RunLog
from plait.events.types import RunFinished, TaskFinished
from plait.run.integrate import Integrator, PlannedIntegrator
from plait.run.scheduler import TaskResult

__all__ = ["record_end"]


def record_end(
    log: RunLog,
    results: Mapping[str, TaskResult],
    integrator: Integrator,
    already: Mapping[str, str],
) -> Literal["done", "failed"]:
    """Log each newly dropped task and the run's end; `done` when a task was integrated, else `failed`.

    The log says `incomplete` for a run that integrated some tasks and dropped others (`already` were logged as
    dropped by an earlier process of this run)."""
    for task_id, result in results.items():
        if result.status == "dropped" and task_id not in already:
            log.append(TaskFinished(run_id=log.run_id, agent=task_id, status="dropped", reason=result.reason))
    done = [t for t, r in results.items() if r.status == "done"]
    dropped = {t: r.reason for t, r in results.items() if r.status == "dropped"}
    status: Literal["done", "failed"] = "done" if done else "failed"
    reason = "; ".join(f"dropped {t}: {why}" for t, why in dropped.items())
    if isinstance(integrator, PlannedIntegrator):  # what dropped tasks were to make pass fails on the result
        left = [line for t in dropped for line in integrator.owed(t)]
        reason += "".join(f"; the integration branch still fails {line}" for line in dict.fromkeys(left))
    logged = "incomplete" if status == "done" and dropped else status
    log.append(
        RunFinished(run_id=log.run_id, status=logged, reason=reason, branch=integrator.branch, commit=integrator.head)
    )
    return status
