"""Waiting for a file another task holds is not work: the speed-up does not count it as busy time."""

from __future__ import annotations

import pytest

from plait.events.types import Event, LeaseAction, LeaseChanged, RunFinished, RunStarted, TaskFinished, TaskStarted
from plait.ui.cost import cost_breakdown

R = {"run_id": "r"}


def _task(agent: str, t: float) -> TaskStarted:
    return TaskStarted(**R, agent=agent, ts=t, title=agent, branch=f"b/{agent}", worktree="/w", base_commit="c")


def _lease(agent: str, t: float, action: LeaseAction) -> LeaseChanged:
    lease = {"path": "registry.py", "task": agent, "holder": "a", "action": action, "why": ""}
    return LeaseChanged(**R, agent=agent, ts=t, decision=action, **lease)


def test_a_wait_for_a_claimed_file_is_not_busy_time() -> None:
    events: list[Event] = [
        RunStarted(**R, ts=0.0, task="t", repo="/r", base_commit="c", base_ref="main", model="x"),
        _task("a", 0.0),
        _task("b", 0.0),
        _lease("b", 2.0, "wait"),  # b waits for a's registry from 2 s to 10 s
        TaskFinished(**R, agent="a", ts=10.0, status="done"),
        _lease("b", 10.0, "claim"),
        TaskFinished(**R, agent="b", ts=12.0, status="done"),
        RunFinished(**R, ts=12.0, status="done"),
    ]
    costs = cost_breakdown(events)
    assert costs.busy_s == {"a": 10.0, "b": pytest.approx(4.0)}
    assert costs.sequential_s == pytest.approx(14.0) and costs.speedup == pytest.approx(14.0 / 12.0)
