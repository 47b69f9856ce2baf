"""One fold of the log into a run's state: the summary, the run view and `plait cost` read the same totals."""

from __future__ import annotations

import pytest

from plait.events.types import (
    Event,
    LeaseChanged,
    ModelCallFinished,
    ModelCallStarted,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
)
from plait.messages import ModelResponse, Usage
from plait.models.pricing import PriceTable
from plait.ui._state import TokenSum
from plait.ui.cost import cost_breakdown
from plait.ui.runview import RunView
from plait.ui.summary import summarize

R = {"run_id": "r"}
CLAUDE = "anthropic:claude-haiku-4-5"
USAGE = Usage(input_tokens=1_000, output_tokens=100)


def _call(agent: str, n: int, asked: str, answered: str) -> list[Event]:
    return [
        ModelCallStarted(**R, agent=agent, ts=float(n), call=n, req_hash="h", model=asked, messages=1),
        ModelCallFinished(
            **R, agent=agent, ts=n + 0.5, call=n, req_hash="h", response=ModelResponse(usage=USAGE, model=answered),
            cost_usd=PriceTable().cost(asked, USAGE),
        ),
    ]  # fmt: skip


def _started() -> RunStarted:
    return RunStarted(**R, ts=0.0, task="t", repo="/r", base_commit="c", base_ref="main", model=CLAUDE)


def test_a_call_is_priced_by_the_model_asked_everywhere_even_when_the_answer_names_an_alias() -> None:
    events = [_started(), *_call("a", 1, CLAUDE, "claude-alias-of-a-proxy"), RunFinished(**R, ts=2.0, status="done")]
    summary, view, costs = summarize("r", events), RunView.of("r", events), cost_breakdown(events)
    assert summary.unpriced_calls == view.unpriced_calls == costs.total.unpriced_calls == 0
    assert summary.billed_tokens == pytest.approx(costs.total.billed_tokens)
    assert summary.cost_text == view.cost_text != "unpriced"


def test_a_model_call_of_no_agent_counts_in_every_total() -> None:
    events = [_started(), *_call("", 1, CLAUDE, CLAUDE), RunFinished(**R, ts=2.0, status="done")]
    summary, view, costs = summarize("r", events), RunView.of("r", events), cost_breakdown(events)
    assert summary.model_calls == view.model_calls == costs.total.calls == 1
    assert view.usage == summary.usage == costs.total.usage == TokenSum(**USAGE.model_dump())
    assert view.cost_usd == pytest.approx(costs.by_agent["(run)"].cost_usd) and view.cost_usd > 0


def test_a_wait_cut_short_by_its_attempts_end_does_not_eat_the_next_attempt() -> None:
    lease = {"path": "registry.py", "task": "b", "holder": "a", "why": ""}
    events: list[Event] = [
        _started(),
        TaskStarted(**R, agent="b", ts=0.0, title="b", branch="b/b", worktree="/w", base_commit="c"),
        LeaseChanged(**R, agent="b", ts=2.0, decision="wait", action="wait", **lease),
        TaskFinished(**R, agent="b", ts=5.0, status="failed"),  # the attempt ends while it waits
        TaskStarted(**R, agent="b", ts=20.0, title="b", branch="b/b.2", worktree="/w", base_commit="c", attempt=2),
        TaskFinished(**R, agent="b", ts=30.0, status="done"),
        RunFinished(**R, ts=30.0, status="done"),
    ]
    assert cost_breakdown(events).busy_s == {"b": pytest.approx(12.0)}  # 0-2 s, then the whole second attempt
