"""The Anthropic provider, through the real SDK over real HTTP to the local wire server."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from plait.errors import BadApiKey, ModelError, UnknownModel
from plait.messages import AssistantMessage, Model, ModelRequest, ToolCall, Usage, UserMessage
from plait.models import AnthropicModel
from wire_server import WireServer

if TYPE_CHECKING:
    from conftest import FakeSleep, Retries

MakeModel = Callable[..., AnthropicModel]


def test_text_reply_caches_the_system_prompt(
    server: WireServer, anthropic_model: MakeModel, hello: ModelRequest
) -> None:
    server.push({"text": "Hi.", "usage": {"input_tokens": 12, "output_tokens": 3}})
    model = anthropic_model()
    response = asyncio.run(model.complete(hello))
    assert isinstance(model, Model)
    assert response.text == "Hi."
    assert response.tool_calls == ()
    assert response.usage == Usage(input_tokens=12, output_tokens=3)
    assert (response.model, response.stop_reason) == ("anthropic:claude-test", "end_turn")
    [sent] = server.requests
    assert sent.path == "/v1/messages"
    assert "sk-ant-test" in sent.headers.get("x-api-key", "") + sent.headers.get("authorization", "")
    assert sent.body["model"] == "claude-test"
    assert sent.body["max_tokens"] == 100
    assert sent.body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    cached = {"type": "ephemeral"}
    assert sent.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Say hi.", "cache_control": cached}]}
    ]
    assert "tools" not in sent.body


def test_tool_calls_round_trip(server: WireServer, anthropic_model: MakeModel, tool_round: ModelRequest) -> None:
    server.push({"text": "Done.", "tool_calls": [{"id": "toolu_c", "name": "finish", "arguments": {"summary": "ok"}}]})
    response = asyncio.run(anthropic_model().complete(tool_round))
    assert response.text == "Done."
    assert response.tool_calls == (ToolCall.parse("toolu_c", "finish", {"summary": "ok"}),)
    assert response.stop_reason == "tool_use"
    body = server.requests[0].body
    read_file, finish = body["tools"]
    assert read_file == {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
    assert finish["cache_control"] == {"type": "ephemeral"}
    user, assistant, results = body["messages"]
    # the previous call's last block and this one's are cache breakpoints
    cached = {"type": "ephemeral"}
    assert user == {"role": "user", "content": [{"type": "text", "text": "Fix the bug.", "cache_control": cached}]}
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "call_b", "name": "read_file", "input": {}},
        ],
    }
    assert results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "content": "def a(): pass"},
            {
                "type": "tool_result",
                "tool_use_id": "call_b",
                "content": "malformed arguments",
                "is_error": True,
                "cache_control": cached,
            },
        ],
    }


def test_empty_turns_are_dropped_and_same_role_turns_merged(server: WireServer, anthropic_model: MakeModel) -> None:
    server.push({"text": "ok"})
    request = ModelRequest(
        system="",
        messages=(UserMessage(text="a"), AssistantMessage(text=""), UserMessage(text="b")),
    )
    asyncio.run(anthropic_model().complete(request))
    body = server.requests[0].body
    assert "system" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
            ],
        },
    ]


def test_usage_counts_cache_reads_and_writes(
    server: WireServer, anthropic_model: MakeModel, hello: ModelRequest
) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 20, "cached_tokens": 600, "cache_write_tokens": 300}
    server.push({"text": "ok", "usage": usage})
    response = asyncio.run(anthropic_model().complete(hello))
    assert response.usage == Usage(input_tokens=1000, output_tokens=20, cached_tokens=600, cache_write_tokens=300)


def test_401_is_a_bad_key_and_not_retried(server: WireServer, anthropic_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"status": 401, "message": "invalid x-api-key"})
    with pytest.raises(BadApiKey, match=r"anthropic rejected the API key \(401\): check ANTHROPIC_API_KEY"):
        asyncio.run(anthropic_model().complete(hello))
    assert len(server.requests) == 1


def test_404_is_an_unknown_model(server: WireServer, anthropic_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"status": 404, "message": "model: claude-test"})
    with pytest.raises(UnknownModel, match="does not know model 'claude-test': model: claude-test$"):
        asyncio.run(anthropic_model().complete(hello))
    assert len(server.requests) == 1


def test_other_4xx_carries_the_server_message(
    server: WireServer, anthropic_model: MakeModel, hello: ModelRequest
) -> None:
    server.push({"status": 413, "message": "Request exceeds the maximum size"})
    with pytest.raises(ModelError, match=r"rejected the request \(413\): Request exceeds the maximum size$"):
        asyncio.run(anthropic_model().complete(hello))
    assert len(server.requests) == 1


def test_429_waits_as_told_then_succeeds(
    server: WireServer, anthropic_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, retries: Retries
) -> None:
    server.push({"status": 429, "message": "slow down", "headers": {"retry-after-ms": "10"}}, {"text": "ok"})
    response = asyncio.run(anthropic_model().complete(hello, on_retry=retries))
    assert response.text == "ok"
    assert sleep.waits == [0.01]
    assert retries.calls == [(1, 0.01, "rate limited (429): slow down")]


def test_retry_after_seconds_header(
    server: WireServer, anthropic_model: MakeModel, hello: ModelRequest, sleep: FakeSleep
) -> None:
    server.push({"status": 529, "message": "Overloaded", "headers": {"retry-after": "7"}}, {"text": "ok"})
    assert asyncio.run(anthropic_model().complete(hello)).text == "ok"
    assert sleep.waits == [7.0]


def test_500_twice_then_success(
    server: WireServer, anthropic_model: MakeModel, hello: ModelRequest, retries: Retries
) -> None:
    server.push({"status": 500, "message": "boom"}, {"status": 500, "message": "boom"}, {"text": "ok"})
    assert asyncio.run(anthropic_model().complete(hello, on_retry=retries)).text == "ok"
    assert [reason for _, _, reason in retries.calls] == ["server error (500): boom"] * 2
    assert len(server.requests) == 3


def test_retries_exhausted(server: WireServer, anthropic_model: MakeModel, hello: ModelRequest) -> None:
    server.push(*[{"status": 529, "message": "Overloaded"}] * 4)
    with pytest.raises(ModelError, match=r"anthropic:claude-test failed after 3 retries: server error \(529\)"):
        asyncio.run(anthropic_model().complete(hello))
    assert len(server.requests) == 4


def test_connection_refused_names_the_url(anthropic_model: MakeModel, hello: ModelRequest) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(ModelError, match=f"claude-test: nothing is listening at {url}: is the server running\\?$"):
        asyncio.run(anthropic_model(base_url=url, max_retries=0).complete(hello))
