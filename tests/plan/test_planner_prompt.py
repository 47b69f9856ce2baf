"""What the planner is told about when a split does not pay, and about what its reading costs."""

from __future__ import annotations

from plait.plan._prompt import planner_system


def _said() -> str:
    return " ".join(planner_system("(map)").split())


def test_a_list_of_small_changes_is_one_agents_work() -> None:
    said = _said()
    assert "a list of small changes (a function here, a few lines there, however many of them)" in said
    assert "a small part costs its agent about as much as one agent spends on several such parts" in said


def test_the_planner_decides_the_mode_first_and_reads_nothing_for_one_agent() -> None:
    said = _said()
    assert "decide the mode first" in said
    assert "If it is single, call submit_plan at once, without reading any file" in said
    assert "write in them only what the task does not already say" in said
