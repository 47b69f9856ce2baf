"""A run folded from its events: agents' states and spans, plan progress, and the cost and time arithmetic."""

from __future__ import annotations

import pytest

from plait.events.types import (
    AgentStopped,
    Event,
    ModelCallFinished,
    ModelCallStarted,
    NotePosted,
    PlanMade,
    PolicyDecided,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
)
from plait.messages import ModelResponse, Usage
from plait.models.pricing import Price, PriceTable
from plait.plan_model import Plan
from plait.ui.cost import cost_breakdown
from plait.ui.runview import RunView, phase_of

R = {"run_id": "r"}


def _call(agent: str, t: float, t_end: float, model: str, tokens: tuple[int, int, int], cost: float) -> list[Event]:
    usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1], cached_tokens=tokens[2])
    return [
        ModelCallStarted(**R, agent=agent, ts=t, call=1, req_hash="h", model=model, messages=1),
        ModelCallFinished(
            **R, agent=agent, ts=t_end, call=1, req_hash="h", response=ModelResponse(usage=usage), cost_usd=cost
        ),
    ]


def _task(agent: str, t: float, attempt: int = 1) -> TaskStarted:
    return TaskStarted(
        **R, agent=agent, ts=t, title=agent, branch=f"b/{agent}", worktree="/w", base_commit="c", attempt=attempt
    )


def _plan(titles: dict[str, str]) -> Plan:
    tasks = [{"id": task, "title": title, "instructions": ""} for task, title in titles.items()]
    return Plan.model_validate({"mode": "parallel", "reason": "", "tasks": tasks})


def _run() -> list[Event]:
    return [
        RunStarted(**R, ts=0.0, task="t", repo="/r", base_commit="c", base_ref="main", model="x:big",
                   settings={"prices": {"x:big": {"input": 2.0, "output": 8.0, "cached_input": 0.5}}}),
        *_call("planner", 1.0, 3.0, "x:big", (1000, 100, 0), 0.01),
        AgentStopped(**R, agent="planner", ts=4.0, reason="finished"),
        PlanMade(**R, agent="planner", ts=4.5, plan=_plan({"a": "A", "b": "", "c": ""})),
        _task("a", 5.0),
        _task("b", 5.0),
        *_call("a", 5.5, 14.0, "x:big", (4000, 200, 2000), 0.02),
        *_call("b", 5.5, 9.0, "x:small", (4000, 200, 2000), 0.001),
        TaskFinished(**R, agent="b", ts=10.0, status="failed"),
        _task("b", 10.0, attempt=2),
        TaskFinished(**R, agent="a", ts=15.0, status="done"),
        TaskFinished(**R, agent="b", ts=15.0, status="done"),
        *_call("merge-b", 16.0, 18.0, "x:big", (500, 50, 0), 0.005),
        RunFinished(**R, ts=20.0, status="done"),
    ]  # fmt: skip


def test_agents_states_spans_and_plan_progress() -> None:
    events = _run()
    view = RunView.of("r", events[:7])
    assert list(view.agents) == ["planner", "a", "b", "c"]
    assert view.plan_counts() == {"running": 2, "waiting": 1}
    assert view.agents["planner"].state == "done" and view.agents["planner"].busy_s() == 3.0
    view.apply(events[7:])
    b = view.agents["b"]
    assert b.attempt == 2 and [(s.start, s.end, s.status) for s in b.spans] == [
        (5.0, 10.0, "failed"),
        (10.0, 15.0, "done"),
    ]
    assert view.agents["merge-b"].title == "resolve a merge conflict"
    assert view.plan_counts() == {"done": 2, "waiting": 1}
    assert view.status == "done" and view.elapsed_s(now=99.0) == 20.0


def test_cost_by_agent_model_and_phase_with_cache_savings_and_parallel_time() -> None:
    costs = cost_breakdown(_run())
    assert costs.total.cost_usd == pytest.approx(0.036) and costs.total.calls == 4
    assert {k: v.calls for k, v in costs.by_phase.items()} == {"planning": 1, "work": 2, "reconciliation": 1}
    assert costs.by_model["x:small"].saved_usd == 0.0, "no price known for it"
    assert costs.by_model["x:big"].saved_usd == pytest.approx(2000 * 1.5 / 1e6), "at the run's own price table"
    assert costs.busy_s == {"planner": 3.0, "a": 10.0, "b": 10.0, "merge-b": 2.0}
    assert costs.wall_s == 20.0 and costs.sequential_s == 25.0 and costs.speedup == pytest.approx(1.25)
    assert costs.idle_s == pytest.approx(20.0 - (3.0 + 10.0 + 2.0)), "0-1, 4-5, 15-16 and 18-20 had no agent busy"
    overridden = cost_breakdown(_run(), PriceTable({"x:small": Price(input=1.0, output=1.0, cached_input=0.1)}))
    assert overridden.by_model["x:small"].saved_usd == pytest.approx(2000 * 0.9 / 1e6)


def test_phases() -> None:
    assert [phase_of(a) for a in ("planner", "resolver-x", "merge", "t1", "")] == [
        "planning",
        "reconciliation",
        "reconciliation",
        "work",
        "run",
    ]


def test_the_gate_the_radar_and_the_merge_queue_are_not_agents_and_nothing_runs_after_the_run_ends() -> None:
    events: list[Event] = [
        *_run()[:-1],
        NotePosted(**R, agent="merge-queue", ts=18.5, topic="integrated", text="a is in", paths=["x.py"]),
        NotePosted(**R, agent="radar", ts=18.6, topic="conflict", text="b overlaps a", to=["b"]),
        PolicyDecided(**R, agent="gate", ts=18.7, action="command", subject="pytest", verdict="allow"),
        *_call("resolver-b", 18.8, 19.0, "x:big", (10, 1, 0), 0.0),
        RunFinished(**R, ts=20.0, status="done"),
    ]
    view = RunView.of("r", events)
    assert not {"merge-queue", "radar", "gate"} & set(view.agents)
    running = {a.id: a.state for a in view.agents.values() if a.state in ("running", "ready")}
    assert running == {}, running
    assert view.agents["resolver-b"].spans[-1].end == 19.0, "busy until its last step, not the run's end"
