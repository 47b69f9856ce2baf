"""A resumed run charges its budgets with what its earlier process paid, exactly as a full decode of the log says,
and the first agent to replay decodes its own past, not every agent's: counted, not timed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from counting_store import CountingStore
from plait.agent._replay import AttemptRecord
from plait.agent.budget import Budget, Limits
from plait.agent.journal import REPLAYED
from plait.agent.loop import Agent, AgentLimits
from plait.agent.tools import Toolbox
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import ModelCallFinished
from plait.messages import Usage
from plait.models import PriceTable, ScriptedModel
from plait.models.pricing import Price
from plait.run.state import charge_earlier_spending
from plait.workspace import LocalShell, Repo

AGENTS = ("a", "b", "c")
PRICES = PriceTable({"scripted:inline": Price(input=100.0, output=300.0)})


def _turn(step: int, agent_index: int) -> dict[str, object]:
    usage = {"input_tokens": 100 * step + agent_index, "output_tokens": 7 * step, "cached_tokens": step}
    return {"text": f"step {step}", "tool_calls": [{"name": "list_files", "arguments": {}}], "usage": usage}


async def _spend(repo: Repo, log: RunLog, run: Budget) -> None:
    """Three agents at work at once, each paying for a few calls, until their process dies (no finish)."""

    async def one(i: int, agent: str) -> None:
        model = ScriptedModel([_turn(step, i) for step in range(1, 6)])
        budget = run.child(agent, Limits())
        worker = Agent(
            log=log,
            agent_id=agent,
            model=model,
            toolbox=Toolbox(repo.root, LocalShell()),
            prices=PRICES,
            system="s",
            budget=budget,
            limits=AgentLimits(max_steps=5),
        )
        await worker.run("t")

    await asyncio.gather(*(one(i, agent) for i, agent in enumerate(AGENTS)))


def test_a_resumed_run_is_charged_what_the_log_says_it_paid_and_its_first_agent_reads_its_own_past(
    repo: Repo, tmp_path: Path
) -> None:
    path = tmp_path / "events.db"
    first = SQLiteEventStore(path)
    paid = Budget("run", Limits(), RunLog(first, "r"))
    asyncio.run(_spend(repo, RunLog(first, "r"), paid))
    first.close()

    store = CountingStore(SQLiteEventStore(path))  # a new process resuming the run
    log = RunLog(store, "r")
    whole = store.inner.events("r")
    answers = [e for e in whole if isinstance(e, ModelCallFinished)]
    assert {e.agent for e in answers} == set(AGENTS) and paid.usd > 0

    store.decoded = 0
    run = Budget("run", Limits(), log)
    charge_earlier_spending(run, log)
    tasks = {agent: run.child(agent, Limits()) for agent in AGENTS}
    charge_earlier_spending(run, log, tasks)
    assert run.usage == sum((e.response.usage for e in answers), Usage()) == paid.usage
    assert run.usd == pytest.approx(sum(e.cost_usd for e in answers)) and run.usd == pytest.approx(paid.usd)
    for agent, budget in tasks.items():
        own = [e for e in answers if e.agent == agent]
        assert budget.usage == sum((e.response.usage for e in own), Usage())
        assert budget.usd == pytest.approx(sum(e.cost_usd for e in own))

    record = AttemptRecord(log, "a", 1)  # the first agent to replay
    own_past = [e for e in whole if e.agent == "a" and e.kind != "model_response" and e.kind in REPLAYED]
    after_answers = [e for e in own_past if e.seq > answers[-1].seq]  # read once more from where the answers end
    # the budgets decode the run's answers, the first agent its own past: not the other agents' tool calls
    assert store.decoded <= len(answers) + len(own_past) + len(after_answers)
    assert sorted(record.answers) == [e.call for e in answers if e.agent == "a"]
    for agent in AGENTS:  # each agent's past, as a full decode of the log has it
        replayed = AttemptRecord(log, agent, 1)
        assert sorted(r.seq for r in replayed.results.values()) == [
            e.seq for e in whole if e.agent == agent and e.kind == "tool_result"
        ]
        assert {n: e.seq for n, e in replayed.answers.items()} == {e.call: e.seq for e in answers if e.agent == agent}
