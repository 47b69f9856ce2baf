"""`plait cost` and the run summary weigh cached and cache-written tokens as the providers bill them."""

from __future__ import annotations

import pytest

from plait.events.types import Event, ModelCallFinished, ModelCallStarted, RunFinished, RunStarted
from plait.messages import ModelResponse, Usage
from plait.models.pricing import PriceTable
from plait.ui.cost import cost_breakdown
from plait.ui.summary import summarize

R = {"run_id": "r"}
CLAUDE = "anthropic:claude-haiku-4-5"  # $1 in, $0.10 cached, $1.25 written, $5 out per million
GPT = "openai:gpt-5.1"  # $1.25 in, $0.125 cached, $10 out per million


def _call(n: int, model: str, usage: Usage) -> list[Event]:
    cost = PriceTable().cost(model, usage)
    return [
        ModelCallStarted(**R, agent="a", ts=float(n), call=n, req_hash="h", model=model, messages=1),
        ModelCallFinished(
            **R, agent="a", ts=n + 0.5, call=n, req_hash="h", response=ModelResponse(usage=usage, model=model),
            cost_usd=cost,
        ),
    ]  # fmt: skip


def _run() -> list[Event]:
    # a first call writes 10,000 tokens to the cache, the next reads them and writes 2,000 more
    write = Usage(input_tokens=10_100, output_tokens=100, cache_write_tokens=10_000)
    read = Usage(input_tokens=12_100, output_tokens=100, cached_tokens=10_000, cache_write_tokens=2_000)
    gpt = Usage(input_tokens=20_000, output_tokens=200, cached_tokens=16_000)
    return [
        RunStarted(**R, ts=0.0, task="t", repo="/r", base_commit="c", base_ref="main", model=CLAUDE),
        *_call(1, CLAUDE, write),
        *_call(2, CLAUDE, read),
        *_call(3, GPT, gpt),
        RunFinished(**R, ts=9.0, status="done"),
    ]


def test_cost_bills_cache_reads_and_writes_at_their_price() -> None:
    costs = cost_breakdown(_run())
    claude, gpt = costs.by_model[CLAUDE], costs.by_model[GPT]
    # Anthropic: 100 fresh + 10,000 written at 1.25; then 100 fresh + 10,000 read at 0.1 + 2,000 written at 1.25
    assert claude.billed_tokens == pytest.approx(100 + 12_500 + 100 + 100 + 1_000 + 2_500 + 100)
    assert gpt.billed_tokens == pytest.approx(4_000 + 1_600 + 200)
    assert costs.total.billed_tokens == pytest.approx(claude.billed_tokens + gpt.billed_tokens)
    # what caching saved is net of the writes' premium: 10,000 read at $0.90/M less, 12,000 written at $0.25/M more
    assert claude.saved_usd == pytest.approx((10_000 * 0.9 - 12_000 * 0.25) / 1e6)
    assert costs.as_json()["total"]["billed_tokens"] == round(costs.total.billed_tokens)


def test_the_run_summary_counts_billed_tokens() -> None:
    summary = summarize("r", _run())
    assert summary.usage.cached_tokens == 26_000
    assert summary.usage.cache_write_tokens == 12_000
    assert summary.billed_tokens == pytest.approx(cost_breakdown(_run()).total.billed_tokens)
    assert summary.as_json()["billed_tokens"] == round(summary.billed_tokens)


def test_unpriced_models_use_the_providers_ratios() -> None:
    prices = PriceTable()
    assert prices.cache_ratios("anthropic:claude-sonnet-9") == (0.1, 1.25)
    assert prices.cache_ratios("openai:gpt-5.6-sol") == (0.1, 1.25)
    assert prices.cache_ratios("openai:gpt-5.5") == (0.1, 1.0)
    assert prices.cache_ratios("openai-compatible:qwen") == (1.0, 1.0)
    usage = Usage(input_tokens=1_000, output_tokens=10, cached_tokens=900)
    assert prices.billed_tokens("openai:gpt-5.5", usage) == pytest.approx(100 + 90 + 10)
