from __future__ import annotations

from typing import Any

import pytest

from plait.plan_model import Plan, PlanError, parse_plan, slugify, topological_order, validate_plan


def _task(task_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": task_id, "title": f"do {task_id}", "instructions": f"Do {task_id}.", **fields}


def _plan(*tasks: dict[str, Any], mode: str = "parallel", **fields: Any) -> Plan:
    return Plan.model_validate({"mode": mode, "reason": "parts are independent", "tasks": list(tasks), **fields})


def test_a_sound_plan_has_no_problems_and_survives_a_json_round_trip() -> None:
    plan = _plan(
        _task("money", writes=["app/money.py"], provides=["Money"]),
        _task("export", writes=["app/export.py"], consumes=["Money"], depends_on=["money"]),
        contracts=[{"name": "Money", "signature": "class Money: ...", "owner": "money", "path": "app/money.py"}],
    )
    assert validate_plan(plan) == []
    again, problems = parse_plan(plan.model_dump(mode="json"))
    assert problems == [] and again == plan
    assert plan.task("export").depends_on == ["money"] and plan.contract("Money") is not None


def test_every_problem_is_reported_at_once_in_a_sentence_naming_the_task() -> None:
    plan = _plan(
        _task("Bad_ID"),
        _task("dup"),
        _task("dup", title="  ", instructions=""),
        _task("waits", depends_on=["nowhere"], consumes=["Ledger"]),
        _task("escapes", writes=["../outside.py", "/etc/passwd"]),
        reason="",
    )
    problems = validate_plan(plan)
    assert "the reason is empty: say why this mode and this split" in problems
    assert any(p.startswith("task 'Bad_ID': the id must be") for p in problems)
    assert "task 'dup': the id is used by more than one task" in problems
    assert "task 'dup': the title is empty" in problems and "task 'dup': the instructions are empty" in problems
    assert "task 'waits' depends on 'nowhere', which is not a task of the plan" in problems
    assert "task 'waits' consumes contract 'Ledger', which no task provides" in problems
    assert sum("must be a path relative to the repository root" in p for p in problems) == 2


@pytest.mark.parametrize(
    ("tasks", "cycle"),
    [
        ([_task("a", depends_on=["a"])], "a -> a"),
        ([_task("a", depends_on=["b"]), _task("b", depends_on=["a"])], "a -> b -> a"),
        (
            [_task("x"), _task("a", depends_on=["x", "c"]), _task("b", depends_on=["a"]), _task("c", depends_on=["b"])],
            "a -> c -> b -> a",
        ),
    ],
)
def test_a_cycle_is_named(tasks: list[dict[str, Any]], cycle: str) -> None:
    plan = _plan(*tasks)
    assert validate_plan(plan) == [f"the dependencies form a cycle: {cycle}"]
    with pytest.raises(PlanError, match=cycle):
        topological_order(plan)


def test_ids_must_be_short_slugs() -> None:
    ok = ["a", "add-currency", "0-fix", "x" * 40]
    bad = ["", "-lead", "Upper", "under_score", "x" * 41, "a b"]
    for task_id in ok:
        assert validate_plan(_plan(_task(task_id), mode="single")) == [], task_id
    for task_id in bad:
        assert any("the id must be" in p for p in validate_plan(_plan(_task(task_id), mode="single"))), task_id


def test_a_single_plan_has_one_task_and_a_plan_has_at_least_one() -> None:
    assert validate_plan(_plan(_task("a"), _task("b"), mode="single")) == [
        "a single-mode plan has exactly one task, this one has 2"
    ]
    assert validate_plan(_plan(mode="parallel")) == ["the plan has no tasks"]


def test_contract_owners_and_providers_must_agree() -> None:
    plan = _plan(
        _task("a", provides=["Money"]),
        _task("b", provides=["Money"]),
        _task("c", consumes=["Ledger"]),
        contracts=[
            {"name": "Money", "signature": "class Money", "owner": "c"},
            {"name": "Ledger", "signature": "class Ledger", "owner": "ghost"},
        ],
    )
    assert validate_plan(plan) == [
        "contract 'Money' is provided by both 'a' and 'b'",
        "contract 'Money' is owned by 'c' but provided by 'a'",
        "contract 'Ledger' names owner 'ghost', which is not a task",
        "task 'c' consumes contract 'Ledger', which no task provides",
    ]


def test_a_contract_owner_counts_as_its_provider() -> None:
    plan = _plan(
        _task("a"),
        _task("b", consumes=["Money"]),
        contracts=[{"name": "Money", "signature": "class Money", "owner": "a"}],
    )
    assert validate_plan(plan) == []


def test_schema_errors_name_the_field() -> None:
    plan, problems = parse_plan(
        {
            "mode": "both",
            "reason": "r",
            "tasks": [{"id": "a", "title": "t"}, {"id": "b", "title": "t", "instructions": "i", "write_set": []}],
        }
    )
    assert plan is None
    assert problems[0].startswith("mode: Input should be 'single' or 'parallel'")
    assert "tasks[0].instructions is missing" in problems
    assert "tasks[1].write_set is not a known field" in problems
    assert parse_plan("not a plan")[1] == [
        "the plan: Input should be a valid dictionary or instance of Plan (got 'not a plan')"
    ]


def test_a_lone_string_or_null_is_accepted_for_a_list() -> None:
    plan, problems = parse_plan(
        {"mode": "single", "reason": "small", "tasks": [_task("a", writes="a.py", depends_on=None)], "contracts": None}
    )
    assert problems == [] and plan is not None
    assert plan.tasks[0].writes == ["a.py"] and plan.tasks[0].depends_on == [] and plan.contracts == []


def test_topological_order_puts_dependencies_first_and_otherwise_keeps_the_plan_order() -> None:
    plan = _plan(
        _task("ui", depends_on=["api", "model"]),
        _task("docs"),
        _task("api", depends_on=["model"]),
        _task("model"),
    )
    assert [t.id for t in topological_order(plan)] == ["docs", "model", "api", "ui"]


def test_slugify_makes_ids_from_titles() -> None:
    assert slugify("Add a currency to Money!") == "add-a-currency-to-money"
    assert slugify("Refactor the   storage layer (JSON -> SQLite)", max_len=20) == "refactor-the-storage"
    assert slugify("***") == "task"
    assert slugify("x" * 50) == "x" * 40
