"""Prompt caching through the real SDKs: where plait marks a request, what the provider reports, what it costs.

The wire server's `PromptCache` reports usage as the providers do (tests/wire_cache.py): an Anthropic
breakpoint reads only a prefix an earlier request marked at most 20 blocks before it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from plait.messages import (
    SYSTEM_BREAK,
    AssistantMessage,
    Message,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from plait.models import AnthropicModel, OpenAIModel
from plait.models.pricing import DEFAULT_PRICES, PriceTable
from wire_cache import PromptCache, prompt_tokens
from wire_server import WireServer

SYSTEM = "You are a careful coding agent. " * 40
TOOLS = tuple(
    ToolSpec(
        name=f"tool_{i}",
        description="A tool of the agent, described at length. " * 10,
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    for i in range(6)
)


@pytest.fixture
def cache() -> PromptCache:
    return PromptCache(min_tokens=256)


@pytest.fixture
def cached_server(cache: PromptCache) -> Iterator[WireServer]:
    with WireServer(lambda fmt, body: {"text": "ok"}, cache=cache) as running:
        yield running


def _anthropic(server: WireServer) -> AnthropicModel:
    return AnthropicModel("anthropic:claude-haiku-4-5", "claude-haiku-4-5", api_key="k", base_url=server.url)


def _openai(server: WireServer, provider: str = "openai") -> OpenAIModel:
    return OpenAIModel("openai:gpt-5.1", "gpt-5.1", api_key="k", base_url=server.openai_url, provider=provider)


def _step(number: int, calls: int = 1) -> list[Message]:
    """One agent step: an assistant turn of `calls` reads and their results, each a few hundred tokens."""
    ids = [f"call_{number}_{i}" for i in range(calls)]
    turn = AssistantMessage(
        text=f"Step {number}.", tool_calls=tuple(ToolCall.parse(i, "tool_0", {"path": f"{i}.py"}) for i in ids)
    )
    return [turn, *(ToolResultMessage(call_id=i, name="tool_0", content=f"{i}: " + "x = 1\n" * 150) for i in ids)]


def _conversation(*steps: list[Message]) -> ModelRequest:
    messages: list[Message] = [UserMessage(text="Fix the bug in calc.py.")]
    for step in steps:
        messages += step
    return ModelRequest(system=SYSTEM, messages=tuple(messages), tools=TOOLS)


def _marked(body: dict[str, Any]) -> list[str]:
    """Where a request's cache breakpoints are: 'tools', 'system' or 'role:index of the block in the turn'."""
    found = ["tools" for t in body.get("tools", []) if "cache_control" in t]
    found += ["system" for b in body.get("system", []) if "cache_control" in b]
    for n, turn in enumerate(body["messages"]):
        found += [f"{turn['role']}{n}:{i}" for i, b in enumerate(turn["content"]) if "cache_control" in b]
    return found


def test_an_agents_anthropic_calls_each_read_what_the_one_before_wrote(cached_server: WireServer) -> None:
    model = _anthropic(cached_server)
    first, second, third = _step(1), _step(2), _step(3)
    usages = [asyncio.run(model.complete(_conversation(*steps))).usage for steps in ([], [first], [first, second])]
    usages.append(asyncio.run(model.complete(_conversation(first, second, third))).usage)
    bodies = [r.body for r in cached_server.requests]
    assert _marked(bodies[0]) == ["tools", "system", "user0:0"]
    assert _marked(bodies[1]) == ["tools", "system", "user0:0", "user2:0"]
    assert _marked(bodies[3]) == ["tools", "system", "user4:0", "user6:0"]
    for before, usage in zip(usages, usages[1:], strict=False):
        # the whole previous request is read back; only the new step is written
        assert usage.cached_tokens == before.input_tokens == before.cached_tokens + before.cache_write_tokens
        assert 0 < usage.cache_write_tokens < usage.cached_tokens
        assert usage.input_tokens > usage.cached_tokens + usage.cache_write_tokens - 1


def test_a_turn_of_many_tool_calls_still_reads_the_previous_call(cached_server: WireServer) -> None:
    """Twelve calls and their results are 24 blocks: more than Anthropic looks back from the last breakpoint."""
    model = _anthropic(cached_server)
    first = _step(1)
    before = asyncio.run(model.complete(_conversation(first))).usage
    after = asyncio.run(model.complete(_conversation(first, _step(2, calls=12)))).usage
    assert after.cached_tokens == before.input_tokens


def test_workers_with_the_same_tools_share_them_in_the_cache(cached_server: WireServer) -> None:
    model = _anthropic(cached_server)
    one = ModelRequest(system=SYSTEM + "Your area: a.py", messages=(UserMessage(text="Task a."),), tools=TOOLS)
    two = ModelRequest(system=SYSTEM + "Your area: b.py", messages=(UserMessage(text="Task b."),), tools=TOOLS)
    asyncio.run(model.complete(one))
    usage = asyncio.run(model.complete(two)).usage
    assert usage.cached_tokens > 0  # the tools, marked at their end
    assert usage.cache_write_tokens >= len(SYSTEM) // 4  # its own system prompt is its own


def test_a_system_prompts_shared_part_is_marked_and_read_by_the_next_agent(cached_server: WireServer) -> None:
    model = _anthropic(cached_server)
    one = ModelRequest(system=SYSTEM + SYSTEM_BREAK + "Your area: a.py", messages=(UserMessage(text="a"),), tools=TOOLS)
    two = ModelRequest(system=SYSTEM + SYSTEM_BREAK + "Your area: b.py", messages=(UserMessage(text="b"),), tools=TOOLS)
    asyncio.run(model.complete(one))
    usage = asyncio.run(model.complete(two)).usage
    body = cached_server.requests[1].body
    assert [b["text"] for b in body["system"]] == [SYSTEM, "Your area: b.py"]
    assert _marked(body) == ["system", "system", "user0:0"]  # the first system mark covers the tools
    shared = sum(prompt_tokens(piece) for piece in (*body["tools"], body["system"][0]))
    assert usage.cached_tokens == shared  # the tools and the shared part of the system prompt
    openai = _openai(cached_server)
    asyncio.run(openai.complete(one))
    assert cached_server.requests[-1].body["messages"][0]["content"] == SYSTEM + "Your area: a.py"


def test_cached_tokens_are_billed_at_the_cached_price_on_both_wires(cached_server: WireServer) -> None:
    prices = PriceTable()
    for model in (_anthropic(cached_server), _openai(cached_server)):
        asyncio.run(model.complete(_conversation(_step(1))))
        usage = asyncio.run(model.complete(_conversation(_step(1), _step(2)))).usage
        assert usage.cached_tokens > 0, model.name
        price = DEFAULT_PRICES[model.name]
        assert price.cached_input is not None
        fresh = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
        write = price.cache_write if price.cache_write is not None else price.input
        expected = fresh * price.input + usage.cached_tokens * price.cached_input + usage.cache_write_tokens * write
        expected += usage.output_tokens * price.output
        assert prices.cost(model.name, usage) == pytest.approx(expected / 1e6)
        assert prices.cost(model.name, usage) < prices.cost(model.name, Usage(input_tokens=usage.input_tokens))


def test_openai_requests_of_one_model_share_a_cache_key(cached_server: WireServer) -> None:
    one, other = _openai(cached_server), _openai(cached_server)
    for model in (one, one, other):
        asyncio.run(model.complete(_conversation()))
    keys = [r.body.get("prompt_cache_key") for r in cached_server.requests]
    assert keys[0] and keys[0] == keys[1] != keys[2]
    asyncio.run(_openai(cached_server, provider="openai-compatible").complete(_conversation()))
    assert "prompt_cache_key" not in cached_server.requests[-1].body  # a local server may refuse what it does not know


def test_prices_carry_the_providers_cache_ratios() -> None:
    for name, price in DEFAULT_PRICES.items():
        assert price.cached_input is not None, name
        ratio = price.cached_input / price.input
        if name.startswith("anthropic:"):
            assert ratio == pytest.approx(0.1), name
            assert price.cache_write == pytest.approx(1.25 * price.input), name
        else:
            assert ratio in (pytest.approx(0.1), pytest.approx(0.25), pytest.approx(0.5)), name
            assert price.cache_write is None, name  # OpenAI bills no premium for a write
