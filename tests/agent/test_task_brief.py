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
