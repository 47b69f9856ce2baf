"""A task's brief says its task once."""

from __future__ import annotations

from plait.agent.prompts import task_brief

TASK = "Add four new public functions to the package, one in each of four of its modules, with tests."


def test_a_title_cut_from_the_task_is_not_said_before_the_task_in_full() -> None:
    brief = task_brief("main", TASK[:65] + "...", TASK, [], verify="pytest -q")
    assert brief.startswith(f"Your task is `main`:\n\n{TASK}\n")
    assert brief.count("Add four new public functions") == 1


def test_a_title_of_its_own_heads_the_brief() -> None:
    brief = task_brief("docs", "Document the new functions", "Add a section to README.md.", ["README.md"])
    assert brief.startswith("Your task is `docs`: Document the new functions\n\nAdd a section to README.md.\n")


def test_a_brief_is_its_agent_s_first_message_under_one_heading() -> None:
    from plait.agent.prompts import task_prompt

    brief = task_brief("alpha", "Add is_sorted", "In toolz/itertoolz.py add is_sorted.", ["toolz/itertoolz.py"])
    assert task_prompt(brief).startswith("Your task is `alpha`: Add is_sorted\n")
    assert task_prompt("Your task is to fix the build.").startswith("Your task:\n\nYour task is to fix the build.")


def test_one_agent_s_brief_says_its_task_once_without_an_id() -> None:
    from plait.run.one_agent import one_agent_brief, one_task_plan

    task = "Fix the --compact flag of the command line."
    (planned,) = one_task_plan(task).tasks
    brief = one_agent_brief("pytest -q")(planned, None)
    assert brief.startswith(f"Your task:\n\n{task}\n") and brief.count("--compact") == 1


def test_one_agent_s_brief_says_what_its_gate_checks_without_a_merge_it_does_not_have() -> None:
    from plait.run.one_agent import one_agent_brief, one_task_plan

    (planned,) = one_task_plan("Fix the --compact flag.").tasks
    brief = " ".join(one_agent_brief("pytest -q")(planned, None).split())
    assert "your work is checked: the files must parse, and `pytest -q` must not fail any test that passed" in brief
    assert "integration branch" not in brief and "merge" not in brief
