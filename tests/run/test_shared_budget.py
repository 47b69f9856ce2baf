"""A worker on another node sees the run's budget as the shared log has it: every other agent's spending counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.agent.budget import BudgetExceeded, Limits
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import ModelCallFinished
from plait.messages import ModelResponse, Usage
from plait.run.backends._remote import SharedRunBudget

RUN = "r1"


def _paid(store: SQLiteEventStore, agent: str, tokens: int, call: int = 1) -> None:
    usage = Usage(input_tokens=tokens)
    store.append(
        ModelCallFinished(run_id=RUN, agent=agent, call=call, req_hash="h", response=ModelResponse(usage=usage))
    )


def test_other_agents_spending_logged_anywhere_stops_this_worker_at_the_runs_limit(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    _paid(store, "me", 200)  # this task's earlier attempt, before the worker started
    _paid(store, "other", 300)
    run = SharedRunBudget("run", Limits(tokens=1000), RunLog(store, RUN), own="me")
    mine = run.child("me", Limits())
    run.check()
    assert run.usage.total_tokens == 500  # everything logged before its first check
    mine.charge(Usage(input_tokens=100), 0.0)  # this worker's own new call, charged as it is answered
    _paid(store, "me", 100, call=2)  # ... and logged: not counted a second time
    run.check()
    assert run.usage.total_tokens == 600
    _paid(store, "other", 450, call=2)  # another node's agent spends: the run is over its limit
    with pytest.raises(BudgetExceeded):
        mine.check()
    store.close()
