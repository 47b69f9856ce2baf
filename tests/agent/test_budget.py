from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.agent.budget import Budget, BudgetExceeded, Limits
from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events import Decision, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import Usage
from plait.models import PriceTable, ScriptedModel
from plait.models.pricing import Price
from plait.workspace import LocalShell, Repo


def _decisions(store: SQLiteEventStore) -> list[Decision]:
    return [e for e in store.events("r") if isinstance(e, Decision) and e.topic == "budget"]


def test_a_task_budget_warns_at_80_percent_then_stops(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    run = Budget("run", Limits(), RunLog(store, "r"))
    task = run.child("t1", Limits(tokens=100))
    task.charge(Usage(input_tokens=70, output_tokens=10), 0.0)
    task.check()
    assert [d.data["level"] for d in _decisions(store)] == ["warn"]
    task.charge(Usage(input_tokens=20), 0.0)
    with pytest.raises(BudgetExceeded, match="t1 budget spent: 100 tokens of 100"):
        task.check()
    assert [d.data["level"] for d in _decisions(store)] == ["warn", "stop"]
    assert run.usage.total_tokens == 100  # the run was charged too


def test_the_run_budget_stops_every_task_under_it(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    run = Budget("run", Limits(usd=1.0), RunLog(store, "r"))
    a, b = run.child("a", Limits()), run.child("b", Limits())
    a.charge(Usage(), 0.6)
    b.charge(Usage(), 0.5)
    with pytest.raises(BudgetExceeded, match="run budget spent"):
        a.check()
    with pytest.raises(BudgetExceeded, match="run budget spent"):
        b.check()
    assert sum(1 for d in _decisions(store) if d.data["level"] == "stop") == 1


def test_an_agent_stops_before_the_call_that_would_overspend(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    turn = {"tool_calls": [{"name": "list_files", "arguments": {}}], "usage": {"input_tokens": 1000}}
    model = ScriptedModel([turn] * 5)
    prices = PriceTable({"scripted:inline": Price(input=100.0, output=100.0)})  # $0.10 a call
    budget = Budget("run", Limits(usd=0.25), RunLog(store, "r")).child("main", Limits())
    agent = Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=model,
        toolbox=Toolbox(repo.root, LocalShell()),
        prices=prices,
        system="s",
        budget=budget,
    )
    result = asyncio.run(agent.run("spend"))
    assert result.reason == "budget" and len(model.calls) == 3
    assert budget.usd == pytest.approx(0.3)
    assert [d.data["level"] for d in _decisions(store)] == ["warn", "stop"]


def test_a_resumed_run_is_charged_what_it_paid_once_and_replays_are_not_charged_again(
    repo: Repo, tmp_path: Path
) -> None:
    from plait.run.state import charge_earlier_spending

    store = SQLiteEventStore(tmp_path / "e.db")
    turn = {"tool_calls": [{"name": "list_files", "arguments": {}}], "usage": {"input_tokens": 1000}}
    finish = {"tool_calls": [{"name": "finish", "arguments": {"summary": "ok"}}], "usage": {"input_tokens": 1000}}
    prices = PriceTable({"scripted:inline": Price(input=100.0, output=100.0)})  # $0.10 a call

    def agent(model: ScriptedModel, budget: Budget) -> Agent:
        return Agent(
            log=RunLog(store, "r"),
            agent_id="main",
            model=model,
            toolbox=Toolbox(repo.root, LocalShell()),
            prices=prices,
            system="s",
            budget=budget,
        )

    first = Budget("run", Limits(), RunLog(store, "r"))
    assert asyncio.run(agent(ScriptedModel([turn, turn, finish]), first.child("main", Limits())).run("t")).ok
    assert first.usd == pytest.approx(0.3)

    again = Budget("run", Limits(), RunLog(store, "r"))  # a new process resuming the same run
    charge_earlier_spending(again, RunLog(store, "r"))
    task = again.child("main", Limits())
    charge_earlier_spending(again, RunLog(store, "r"), {"main": task})
    assert again.usd == pytest.approx(0.3) and task.usd == pytest.approx(0.3)
    replay = ScriptedModel([])  # every call is read back: none reaches the model, none is charged again
    assert asyncio.run(agent(replay, task).run("t")).ok
    assert again.usd == pytest.approx(0.3) and task.usd == pytest.approx(0.3) and replay.calls == []
