"""A model with no price costs an unknown amount, never `$0.0000`: runs, status, cost and the report say `unpriced`."""

from __future__ import annotations

from rich.console import Console

from plait.events.types import Event, ModelCallFinished, ModelCallStarted, RunFinished, RunStarted
from plait.messages import ModelResponse, Usage
from plait.ui import _fmt
from plait.ui._report_parts import cost_section
from plait.ui.cost import cost_breakdown
from plait.ui.overview import render_cost
from plait.ui.runview import RunView
from plait.ui.summary import summarize

R = {"run_id": "r"}
PRICES = {"prices": {"x:big": {"input": 2.0, "output": 8.0}}}


def _call(agent: str, t: float, model: str, cost: float) -> list[Event]:
    response = ModelResponse(usage=Usage(input_tokens=1000, output_tokens=10), model=model)
    return [
        ModelCallStarted(**R, agent=agent, ts=t, call=1, req_hash="h", model=model, messages=1),
        ModelCallFinished(**R, agent=agent, ts=t + 1, call=1, req_hash="h", response=response, cost_usd=cost),
    ]


def _run(*calls: list[Event]) -> list[Event]:
    start = RunStarted(**R, ts=0.0, task="t", repo="/r", base_commit="c", base_ref="main", model="local:m",
                       settings=PRICES)  # fmt: skip
    return [start, *(e for c in calls for e in c), RunFinished(**R, ts=9.0, status="done")]


def test_a_run_of_an_unpriced_model_says_unpriced_everywhere() -> None:
    events = _run(_call("a", 1.0, "local:m", 0.0), _call("b", 2.0, "local:m", 0.0))
    assert summarize("r", events).cost_text == "unpriced"
    assert summarize("r", events).as_json()["unpriced_calls"] == 2
    view = RunView.of("r", events)
    assert view.cost_text == "unpriced" and view.agents["a"].cost_text == "unpriced"
    costs = cost_breakdown(events)
    console = Console(width=200, record=True)
    render_cost(console, costs)
    text = console.export_text()
    assert "total unpriced for 2 model calls" in text and "$0.0000 for" not in text
    assert "Total <b>unpriced</b>" in cost_section(costs)


def test_a_run_partly_of_an_unpriced_model_shows_the_known_dollars_and_says_the_rest_is_unpriced() -> None:
    events = _run(_call("a", 1.0, "x:big", 0.0021), _call("b", 2.0, "local:m", 0.0))
    assert summarize("r", events).cost_text == "$0.0021 + unpriced"
    view = RunView.of("r", events)
    assert view.agents["a"].cost_text == "$0.0021" and view.agents["b"].cost_text == "unpriced"
    assert cost_breakdown(events).by_model["x:big"].unpriced_calls == 0


def test_a_priced_run_and_a_run_with_no_calls_read_in_dollars() -> None:
    assert summarize("r", _run(_call("a", 1.0, "x:big", 0.0021))).cost_text == "$0.0021"
    assert summarize("r", _run()).cost_text == "$0.0000"
    assert _fmt.usd(12.5) == "$12.50"
