"""A planner's plan that runs as one agent keeps the planner's instructions."""

from __future__ import annotations

from plait.plan_model import Plan, PlanTask
from plait.run.one_agent import as_one_task, one_task_plan

TASK = "Add is_sorted to itertoolz and export it"


def test_the_planners_notes_reach_the_one_agent() -> None:
    plan = Plan(
        mode="single",
        reason="one module",
        tasks=[
            PlanTask(
                id="sorted",
                title="is_sorted",
                instructions="In toolz/itertoolz.py add is_sorted(seq, key=None); list it in __all__.",
            )
        ],
    )
    single = as_one_task(TASK, plan)
    (task,) = single.tasks
    assert task.id == "main" and task.instructions.startswith(TASK)
    assert "The planner's notes on how to do it" in task.instructions and "toolz/itertoolz.py" in task.instructions
    assert single.mode == "single" and single.reason == "one module"


def test_a_plan_with_nothing_beyond_the_task_is_the_task_as_given() -> None:
    plan = Plan(mode="single", reason="small", tasks=[PlanTask(id="main", title="t", instructions=TASK)])
    assert as_one_task(TASK, plan).tasks[0].instructions == one_task_plan(TASK).tasks[0].instructions


def test_a_retry_is_told_why_once() -> None:
    from plait.agent.prompts import retry_note

    held = "held against it: tests/test_a.py::test_b (a test in a test file it added or changed)"
    why = f"the verify check failed once it was merged: {held}"
    detail = f"{held}\n$ python -m pytest -q\n[exit 1]\nFAILED tests/test_a.py::test_b - assert 1 == 2\n"
    note = retry_note(1, why, detail, head="a" * 40, files=["a.py"], conflicts=[], put_back=[])
    assert note.count("held against it") == 1
    assert "What failed:" in note and "FAILED tests/test_a.py::test_b - assert 1 == 2" in note
    assert "What failed" not in retry_note(1, why, held, head="a" * 40, files=[], conflicts=[], put_back=[])


def test_a_planner_that_says_the_task_says_it_all_adds_no_notes() -> None:
    from plait.plan_model import validate_plan

    for said in ("As given.", "as given", ""):
        plan = Plan(mode="single", reason="small", tasks=[PlanTask(id="main", title="t", instructions=said)])
        assert as_one_task(TASK, plan).tasks[0].instructions == TASK
        assert not validate_plan(plan), "one agent's plan may leave the instructions empty"
    split = Plan(mode="parallel", reason="r", tasks=[PlanTask(id="a", title="t", instructions="")])
    assert any("instructions are empty" in p for p in validate_plan(split))
