"""Fixtures for the model tests: a wire server, providers pointed at it, and a sleep that does not wait."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from plait.messages import AssistantMessage, ModelRequest, ToolCall, ToolResultMessage, ToolSpec, UserMessage
from plait.models import AnthropicModel, OpenAIModel
from wire_server import WireServer


class FakeSleep:
    """Records the waits asked of it and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


class Retries:
    """An `on_retry` hook that records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, float, str]] = []

    def __call__(self, attempt: int, wait: float, reason: str) -> None:
        self.calls.append((attempt, wait, reason))


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


@pytest.fixture
def sleep() -> FakeSleep:
    return FakeSleep()


@pytest.fixture
def retries() -> Retries:
    return Retries()


@pytest.fixture
def openai_model(server: WireServer, sleep: FakeSleep) -> Callable[..., OpenAIModel]:
    def make(**overrides: Any) -> OpenAIModel:
        options: dict[str, Any] = {
            "api_key": "sk-test",
            "base_url": server.openai_url,
            "timeout": 5.0,
            "max_retries": 3,
            "sleep": sleep,
        }
        options.update(overrides)
        return OpenAIModel("openai:gpt-test", "gpt-test", **options)

    return make


@pytest.fixture
def anthropic_model(server: WireServer, sleep: FakeSleep) -> Callable[..., AnthropicModel]:
    def make(**overrides: Any) -> AnthropicModel:
        options: dict[str, Any] = {
            "api_key": "sk-ant-test",
            "base_url": server.url,
            "timeout": 5.0,
            "max_retries": 3,
            "sleep": sleep,
        }
        options.update(overrides)
        return AnthropicModel("anthropic:claude-test", "claude-test", **options)

    return make


READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file of the repository.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
FINISH = ToolSpec(
    name="finish",
    description="Say the task is done.",
    parameters={"type": "object", "properties": {"summary": {"type": "string"}}},
)


@pytest.fixture
def hello() -> ModelRequest:
    """A first request: a system prompt and one user message, no tools."""
    return ModelRequest(system="You are terse.", messages=(UserMessage(text="Say hi."),), max_output_tokens=100)


@pytest.fixture
def tool_round() -> ModelRequest:
    """A conversation after one assistant turn with two tool calls, one of them malformed, and their results."""
    return ModelRequest(
        system="You are a coding agent.",
        messages=(
            UserMessage(text="Fix the bug."),
            AssistantMessage(
                text="Looking.",
                tool_calls=(
                    ToolCall.parse("call_a", "read_file", '{"path": "a.py"}'),
                    ToolCall.parse("call_b", "read_file", '{"path": '),
                ),
            ),
            ToolResultMessage(call_id="call_a", name="read_file", content="def a(): pass"),
            ToolResultMessage(call_id="call_b", name="read_file", content="malformed arguments", is_error=True),
        ),
        tools=(READ_FILE, FINISH),
        max_output_tokens=256,
    )
