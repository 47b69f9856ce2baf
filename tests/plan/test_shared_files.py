"""A file several tasks add to is shared, not owned: they add to it at once; the planner is told how the gate checks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from plait.events import PromptGiven, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import PriceTable, ScriptedModel
from plait.plan import make_plan, resolve_overlaps
from plait.plan._prompt import planner_system, planner_task
from plait.plan_model import Plan, validate_plan
from plait.workspace import LocalShell

FILES = ["shapes/__init__.py", "shapes/registry.py", "shapes/square.py", "tests/test_registry.py"]


def _task(task_id: str, writes: list[str], **fields: Any) -> dict[str, Any]:
    return {"id": task_id, "title": task_id, "instructions": f"Add {task_id}.", "writes": writes, **fields}


def _plan(**fields: Any) -> Plan:
    tasks = [
        _task("circle", ["shapes/circle.py", "shapes/registry.py"]),
        _task("cube", ["shapes/cube.py", "shapes/registry.py"]),
    ]
    return Plan.model_validate({"mode": "parallel", "reason": "one shape each", "tasks": tasks, **fields})


def test_tasks_that_each_add_to_a_shared_registry_still_run_at_the_same_time() -> None:
    shared = _plan(shared=["shapes/registry.py"])
    assert validate_plan(shared) == []
    resolved, decisions = resolve_overlaps(shared, FILES)
    assert decisions == [] and [t.depends_on for t in resolved.tasks] == [[], []]
    assert [t.writes for t in resolved.tasks] == [t.writes for t in shared.tasks]
    # without it, one task gets the registry and the other must not touch it
    _, owned = resolve_overlaps(_plan(), FILES)
    assert owned and all("shapes/registry.py" in d.files for d in owned)


def test_a_shared_entry_outside_the_repository_is_refused() -> None:
    assert validate_plan(_plan(shared=["../elsewhere.py"])) == [
        "shared entry '../elsewhere.py' must be a path relative to the repository root"
    ]


def test_the_planner_is_told_when_branches_are_gated_and_the_verify_command(tmp_path: Path) -> None:
    system = " ".join(planner_system("(map)").split())
    assert "merged at the end" not in system
    assert "as soon as a task finishes, its branch is merged onto the run's integration branch" in system
    assert "left to the tasks that depend on it" in system and "is listed in shared" in system
    assert planner_task("Add shapes", "pytest -q").endswith("The verify command the gate runs on each merge: pytest -q")
    assert "No verify command" in planner_task("Add shapes", "")
    (tmp_path / "a.py").write_text("A = 1\n")
    store = SQLiteEventStore(tmp_path / "events.db")
    plan = {"mode": "single", "reason": "small", "tasks": [_task("a", ["a.py"])]}
    model = ScriptedModel(
        conversations=[
            {"match": "You are the planner", "turns": [{"tool_calls": [{"name": "submit_plan", "arguments": plan}]}]}
        ]
    )
    asyncio.run(
        make_plan(
            "Add shapes",
            repo_root=tmp_path,
            model=model,
            log=RunLog(store, "r"),
            prices=PriceTable(),
            runner=LocalShell(),
            repo_map="(map)",
            verify="pytest -q",
        )
    )
    (given,) = [e for e in store.events("r", kinds=["prompt"]) if isinstance(e, PromptGiven)]
    assert "The verify command the gate runs on each merge: pytest -q" in given.user


def test_the_planner_is_told_shared_files_take_every_task_at_once_as_their_agents_are() -> None:
    said = " ".join(str(Plan.model_json_schema()["properties"]["shared"]["description"]).split())
    assert "at the same time" in said and "side by side" in said
    assert "claims the file" not in said and "one after another" not in said  # what the agents are told otherwise
    system = " ".join(planner_system("(map)").split())
    assert "A file the project's instructions ask every change to add to (a changelog, say) is shared" in system
