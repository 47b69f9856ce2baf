"""A plan has at most `max_tasks` tasks: a larger one goes back to the planner with the maximum, a file's is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from plait.errors import UsageError
from plait.events import PlanRejected, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import PriceTable, ScriptedModel
from plait.plan import make_plan
from plait.plan.load import load_plan
from plait.plan_model import PlanError
from plait.workspace import LocalShell


def _plan_of(n: int) -> dict[str, Any]:
    tasks = [{"id": f"t{i}", "title": f"Part {i}", "instructions": "Do it.", "writes": [f"f{i}.py"]} for i in range(n)]
    return {"mode": "parallel", "reason": "Independent files.", "tasks": tasks}


def _submit(n: int, expect: str = "") -> dict[str, Any]:
    turn: dict[str, Any] = {"tool_calls": [{"name": "submit_plan", "arguments": _plan_of(n)}]}
    return {**turn, "expect": expect} if expect else turn


def _make(root: Path, store: SQLiteEventStore, turns: list[dict[str, Any]], max_tasks: int) -> Any:
    model = ScriptedModel(conversations=[{"match": "You are the planner", "name": "planner", "turns": turns}])
    plan = make_plan(
        "Split it",
        repo_root=root,
        model=model,
        log=RunLog(store, "r"),
        prices=PriceTable(),
        runner=LocalShell(),
        split="always",
        max_tasks=max_tasks,
    )
    return asyncio.run(plan), model


def test_a_plan_past_the_maximum_goes_back_to_the_planner_told_the_maximum(calc_repo: Path, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    turns = [_submit(1000), _submit(3, expect="the plan has 1000 tasks, more than the 4 a plan may have")]
    plan, model = _make(calc_repo, store, turns, max_tasks=4)
    model.assert_complete()
    assert len(plan.tasks) == 3
    (rejected,) = store.events("r", kinds=["plan_rejected"])
    assert isinstance(rejected, PlanRejected) and "(setting max_tasks)" in rejected.error
    assert "\n" not in rejected.error  # one problem, not one per task


def test_a_planner_that_keeps_planning_too_many_tasks_fails(calc_repo: Path, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    with pytest.raises(PlanError, match="the planner submitted 3 invalid plans; the last one: the plan has 30 tasks"):
        _make(calc_repo, store, [_submit(30)] * 3, max_tasks=24)
    assert store.events("r", kinds=["plan"]) == []


def test_a_plan_file_past_the_maximum_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("".join(f"- Part {i}\n" for i in range(25)))
    with pytest.raises(UsageError, match=r"plan.yaml: the plan has 25 tasks, more than the 24 a plan may have"):
        load_plan(path, max_tasks=24)
    assert len(load_plan(path).tasks) == 25  # no maximum given, none applied


def test_an_untrusted_repository_may_lower_the_maximum_not_raise_it() -> None:
    from plait._repo_file import narrow
    from plait.settings import Settings

    assert narrow({"max_tasks": 1000}, Settings()) == ({}, ["max_tasks"])
    assert narrow({"max_tasks": 5}, Settings()) == ({"max_tasks": 5}, [])
