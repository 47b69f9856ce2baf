"""The plan as a worker sees it marks the files the plan shares, so that another task's row does not claim them."""

from __future__ import annotations

from plait.plan_model import Plan, PlanTask
from plait.run._brief import plan_overview


def _plan() -> Plan:
    tasks = [
        PlanTask(id="enc", title="add enc", instructions="Add enc.", writes=["pkg/enc.py", "CHANGES.rst"]),
        PlanTask(id="sig", title="add sig", instructions="Add sig.", writes=["pkg/sig.py", "CHANGES.rst"]),
    ]
    return Plan(mode="parallel", reason="two modules", tasks=tasks, shared=["CHANGES.rst"])


def test_a_shared_file_is_marked_shared_in_every_row_that_writes_it() -> None:
    plan = _plan()
    files = ["pkg/enc.py", "pkg/sig.py", "CHANGES.rst"]
    seen = plan_overview(plan, plan.tasks[0], near={"pkg/sig.py", "CHANGES.rst"}, files=files)
    assert "- enc (your task): add enc (writes: pkg/enc.py, CHANGES.rst (shared))" in seen
    assert "- sig: add sig (writes CHANGES.rst (shared), pkg/sig.py, near your files)" in seen
    assert "CHANGES.rst (shared)" in plan_overview(plan)
