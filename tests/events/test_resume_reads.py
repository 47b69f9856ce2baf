"""A resumed run reads its long log without decoding it again and again: counted, not timed.

`load_state` decodes the few events that say where a run stands, not its model and tool calls; an agent's
past is decoded once although its journal, its replay and the run (for the attempt's last checkpoint, and to
charge the budgets with what was paid) each ask for it; and what is appended between two reads is still seen
by the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from counting_store import CountingStore
from plait.agent._replay import AttemptRecord
from plait.agent.budget import Budget, Limits
from plait.agent.journal import ModelCallJournal
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import (
    ModelCallFinished,
    ModelCallStarted,
    PlanMade,
    RunStarted,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.messages import ModelResponse, ToolCall, Usage
from plait.models.pricing import PriceTable
from plait.run.state import charge_earlier_spending, load_state

RUN = "r"
STEPS = 200


def _long_run(path: Path, agents: Sequence[str]) -> SQLiteEventStore:
    """A run whose agents each made STEPS model calls and tool calls, then the process died."""
    store = SQLiteEventStore(path, synchronous="OFF", durable=())
    store.append(RunStarted(run_id=RUN, task="t", repo=".", model="m", base_commit="b", base_ref="main"))
    plan = {"mode": "parallel", "reason": "r", "tasks": [{"id": a, "title": a, "instructions": a} for a in agents]}
    store.append(PlanMade(run_id=RUN, plan=plan))
    for agent in agents:
        store.append(TaskStarted(run_id=RUN, agent=agent, title=agent, branch=agent, worktree=agent, base_commit="b"))
    for step in range(1, STEPS + 1):
        for agent in agents:
            call = ToolCall(id=f"c{step}", name="read_file", arguments={"path": "x"})
            ids = {"run_id": RUN, "agent": agent}
            answer = ModelResponse(tool_calls=(call,), usage=Usage(input_tokens=1))
            store.append(ModelCallStarted(**ids, call=step, req_hash="h", model="m", messages=step))
            store.append(ModelCallFinished(**ids, call=step, req_hash="h", response=answer))
            store.append(ToolCalled(**ids, call=call, step=step))
            store.append(ToolReturned(**ids, call_id=call.id, name="read_file", output="x", step=step, checkpoint=""))
    return store


def test_load_state_decodes_where_the_run_stands_not_its_model_and_tool_calls(tmp_path: Path) -> None:
    store = CountingStore(_long_run(tmp_path / "events.db", ["a", "b"]))
    state = load_state(RunLog(store, RUN))
    assert state.attempts == {"a": 1, "b": 1}
    assert state.unfinished
    assert store.decoded <= 10  # the run's start, its plan, each task's start: not 2 x 4 x STEPS events


def test_the_runs_past_is_decoded_once_by_all_that_read_it(tmp_path: Path) -> None:
    store = CountingStore(_long_run(tmp_path / "events.db", ["a", "b"]))
    run = Budget(scope="run", limits=Limits(), log=RunLog(store, RUN))
    tasks = {agent: run.child(agent, Limits()) for agent in ("a", "b")}
    charge_earlier_spending(run, RunLog(store, RUN))  # as a resumed run does: the run's budget, then each task's
    charge_earlier_spending(run, RunLog(store, RUN), tasks)
    for agent in ("a", "b"):  # the attempt's last checkpoint before its worktree, again for its agent, then the
        # agent's journal and its own replay
        for _ in range(2):
            assert AttemptRecord(RunLog(store, RUN), agent, 1).last_checkpoint == ""
        journal = ModelCallJournal(RunLog(store, RUN), agent, PriceTable(), 1)
        recorded = AttemptRecord(RunLog(store, RUN), agent, 1)
        assert journal.answered(STEPS) and not journal.answered(STEPS + 1)
        assert recorded.results.get((STEPS, f"c{STEPS}")) is not None
    assert tasks["a"].usage.input_tokens == tasks["b"].usage.input_tokens == STEPS
    assert run.usage.input_tokens == 2 * STEPS
    # each agent's start, model answers, tool calls and results, once (the last agent's tool call and result,
    # logged after the run's last answer, are read again with its past)
    assert store.decoded <= 2 * (3 * STEPS + 1) + 2


def test_what_is_appended_between_two_reads_is_seen_by_the_second(tmp_path: Path) -> None:
    store = CountingStore(_long_run(tmp_path / "events.db", ["a"]))
    assert AttemptRecord(RunLog(store, RUN), "a", 1).last_checkpoint == ""
    store.append(ToolReturned(run_id=RUN, agent="a", call_id="late", name="edit_file", output="", checkpoint="abc"))
    store.append(ToolReturned(run_id=RUN, agent="b", call_id="other", name="edit_file", output="", checkpoint="def"))
    assert AttemptRecord(RunLog(store, RUN), "a", 1).last_checkpoint == "abc"
    assert ModelCallJournal(RunLog(store, RUN), "a", PriceTable(), 1).answered(STEPS)
