from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from plait.errors import ModelError, ScriptError
from plait.events import AgentStopped, NotesDelivered, PlanMade, PlanRejected, SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.messages import Model, ModelRequest, ModelResponse
from plait.models import FunctionModel, PriceTable, ScriptedModel
from plait.plan import make_plan, plan_tool_spec
from plait.plan_model import Plan, PlanError
from plait.workspace import LocalShell

TASK = "Fix add and document it"
VALID = {
    "mode": "parallel",
    "reason": "The fix and the docs touch different files.",
    "tasks": [
        {"id": "fix", "title": "Fix add", "instructions": "Make add add; run the tests.", "writes": ["calc.py"]},
        {"id": "docs", "title": "Document add", "instructions": "Describe add in README.md.", "writes": "README.md"},
    ],
}
CYCLE = {
    "mode": "parallel",
    "reason": "Two parts.",
    "tasks": [
        {"id": "fix", "title": "Fix add", "instructions": "Fix it.", "depends_on": ["docs"]},
        {"id": "docs", "title": "Document add", "instructions": "Doc it.", "depends_on": ["fix"]},
    ],
}


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _planner(turns: list[dict[str, Any]]) -> ScriptedModel:
    """A model that answers the planner, and fails anyone else: the conversation is matched on its prompt."""
    return ScriptedModel(conversations=[{"match": "You are the planner", "name": "planner", "turns": turns}])


def _plan(root: Path, model: Model, store: SQLiteEventStore, **options: Any) -> Plan:
    return asyncio.run(
        make_plan(
            TASK,
            repo_root=root,
            model=model,
            log=RunLog(store, "r"),
            prices=PriceTable(),
            runner=LocalShell(),
            **options,
        )
    )


def test_the_planner_explores_is_told_its_plan_has_a_cycle_and_submits_a_valid_one(
    calc_repo: Path, tmp_path: Path
) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    model = _planner(
        [
            {"tool_calls": [_call("list_files", {"pattern": "*.py"})]},
            {"expect": "calc.py", "tool_calls": [_call("read_file", {"path": "calc.py"})]},
            {"expect": "return a - b", "tool_calls": [_call("submit_plan", CYCLE)]},
            {"expect": "cycle: fix -> docs -> fix", "tool_calls": [_call("submit_plan", VALID)]},
        ]
    )
    plan = _plan(calc_repo, model, store)

    model.assert_complete()
    assert [t.id for t in plan.tasks] == ["fix", "docs"] and plan.task("docs").writes == ["README.md"]
    first = model.calls[0]
    assert [t.name for t in first.tools] == ["read_file", "list_files", "search", "submit_plan"]
    assert "calc.py" in first.system and "def add(a: int, b: int) -> int" in first.system
    assert TASK in first.messages[0].text  # type: ignore[union-attr]
    rejection = model.calls[3].messages[-1]
    assert rejection.kind == "tool_result" and rejection.is_error
    assert "rejected (attempt 1 of 3)" in rejection.content and "call submit_plan again" in rejection.content

    events = store.events("r", agent="planner")
    rejected = [e for e in events if isinstance(e, PlanRejected)]
    made = [e for e in events if isinstance(e, PlanMade)]
    assert [(e.attempt, e.error) for e in rejected] == [(1, "the dependencies form a cycle: fix -> docs -> fix")]
    assert len(made) == 1 and made[0].source == "planner" and Plan.model_validate(made[0].plan) == plan
    assert isinstance(events[-1], AgentStopped) and events[-1].reason == "finished"
    assert events.index(rejected[0]) < events.index(made[0])


def test_the_planner_fails_after_too_many_invalid_plans(calc_repo: Path, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    empty = {**VALID, "tasks": [{"id": "fix", "title": "Fix add", "instructions": " "}]}
    unknown = {**VALID, "tasks": [{**VALID["tasks"][0], "depends_on": ["ghost"]}]}  # type: ignore[dict-item]
    model = _planner(
        [
            {"tool_calls": [_call("submit_plan", empty)]},
            {"expect": "the instructions are empty", "tool_calls": [_call("submit_plan", "{not json")]},
            {"expect": "not a JSON object", "tool_calls": [_call("submit_plan", unknown)]},
        ]
    )
    with pytest.raises(PlanError) as caught:
        _plan(calc_repo, model, store)

    model.assert_complete()
    message = str(caught.value)
    assert "\n" not in message and caught.value.exit_code == 1
    assert message.startswith("the planner submitted 3 invalid plans; the last one: task 'fix' depends on 'ghost'")
    assert message.endswith("pass it with --plan FILE")
    rejected = store.events("r", kinds=["plan_rejected"])
    assert [e.attempt for e in rejected if isinstance(e, PlanRejected)] == [1, 2, 3]
    assert store.events("r", kinds=["plan"]) == []


def test_a_planner_that_tries_to_write_is_told_it_cannot(calc_repo: Path, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    model = _planner(
        [
            {"tool_calls": [_call("write_file", {"path": "calc.py", "content": "oops"})]},
            {"expect": "unknown tool 'write_file'", "tool_calls": [_call("submit_plan", {"plan": VALID})]},
        ]
    )
    plan = _plan(calc_repo, model, store)

    assert len(plan.tasks) == 2
    assert (calc_repo / "calc.py").read_text().startswith("def add(a: int, b: int) -> int:")
    result = next(e for e in store.events("r") if isinstance(e, ToolReturned))
    assert result.is_error and "cannot change it" in result.output
    assert "read_file, list_files, search, submit_plan" in result.output


def test_a_plan_sent_as_a_json_string_is_accepted(calc_repo: Path, tmp_path: Path) -> None:
    model = _planner([{"tool_calls": [_call("submit_plan", {"plan": json.dumps(VALID)})]}])
    assert _plan(calc_repo, model, SQLiteEventStore(tmp_path / "e.db")).mode == "parallel"


def test_a_planner_that_never_submits_is_warned_then_stopped(calc_repo: Path, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    model = _planner([{"tool_calls": [_call("read_file", {"path": "calc.py"})]}] * 5)
    with pytest.raises(PlanError, match=r"^the planner stopped without a plan \(step_limit: "):
        _plan(calc_repo, model, store, max_steps=5, repo_map="(map)")

    assert "(map)" in model.calls[0].system
    warnings = [e for e in store.events("r") if isinstance(e, NotesDelivered)]
    assert len(warnings) == 1 and warnings[0].notes == [
        "You have 3 model calls left: call submit_plan with your plan now."
    ]


def test_a_model_failure_is_a_model_error(calc_repo: Path, tmp_path: Path) -> None:
    def broken(request: ModelRequest) -> ModelResponse:
        raise ScriptError("the provider is down")

    with pytest.raises(ModelError, match="the planner's model failed: the provider is down"):
        _plan(calc_repo, FunctionModel(broken), SQLiteEventStore(tmp_path / "e.db"))


def test_the_submit_tool_schema_is_self_contained() -> None:
    spec = plan_tool_spec()
    text = json.dumps(spec.parameters)
    assert "$ref" not in text and "$defs" not in text
    assert spec.parameters["required"] == ["mode", "reason", "tasks"]
    task = spec.parameters["properties"]["tasks"]["items"]
    assert set(task["required"]) == {"id", "title", "instructions"}
    assert list(task["properties"]) == [
        "id",
        "title",
        "instructions",
        "writes",
        "reads",
        "provides",
        "consumes",
        "depends_on",
    ]
    assert task["properties"]["title"] == {"description": "One line saying what the task does.", "type": "string"}
    assert "title" not in spec.parameters and "title" not in task


def test_the_submit_tool_schema_is_short_and_leaves_out_what_the_planner_is_not_told() -> None:
    """Every planner call sends the schema: no defaults, no `kind` (plait's own), experts only when offered."""
    spec, small = plan_tool_spec(), plan_tool_spec(experts=False)
    text = json.dumps(spec.parameters)

    assert '"default"' not in text and '"kind"' not in text
    assert "experts" in spec.parameters["properties"] and "experts" not in small.parameters["properties"]
    assert len(json.dumps(small.parameters)) < 2600, "the schema was 4,413 characters with every model description"
    plan = Plan.model_validate(
        {"mode": "single", "reason": "r", "tasks": [{"id": "a", "title": "t", "instructions": "i", "kind": "work"}]}
    )
    assert plan.tasks[0].kind == "work", "a plan that still sends kind is accepted"
