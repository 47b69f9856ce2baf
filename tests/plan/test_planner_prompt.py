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


def test_experts_are_offered_only_for_a_repository_too_large_to_list() -> None:
    small = planner_system("3 files tracked by git, 1 KB in all.\na.py (10 B)\nb.py (10 B)\nc.py (10 B)\n")
    large = planner_system("900 files tracked by git.\na.py (10 B)\nNot listed above: 899 files, by directory:\n")
    assert "Experts (optional" not in small and "Experts (optional" in large
    assert "\n\nWork quickly: decide the mode first" in small and "\n\nWork quickly: decide the mode first" in large
    assert "that many tasks consume" in large.split("Work quickly")[0]
