"""The OpenAI provider, through the real SDK over real HTTP to the local wire server."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from plait.errors import BadApiKey, ModelError, UnknownModel
from plait.messages import Model, ModelRequest, ToolCall, Usage
from plait.models import OpenAIModel
from wire_server import WireServer

if TYPE_CHECKING:
    from conftest import FakeSleep, Retries

MakeModel = Callable[..., OpenAIModel]


def test_text_reply(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"text": "Hi.", "usage": {"input_tokens": 12, "output_tokens": 3}})
    model = openai_model()
    response = asyncio.run(model.complete(hello))
    assert isinstance(model, Model)
    assert response.text == "Hi."
    assert response.tool_calls == ()
    assert response.usage == Usage(input_tokens=12, output_tokens=3)
    assert (response.model, response.stop_reason) == ("openai:gpt-test", "stop")
    [sent] = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["model"] == "gpt-test"
    assert sent.body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say hi."},
    ]
    assert sent.body["max_completion_tokens"] == 100
    assert "max_tokens" not in sent.body
    assert "tools" not in sent.body


def test_compatible_server_gets_max_tokens(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"text": "ok"})
    asyncio.run(openai_model(provider="openai-compatible").complete(hello))
    body = server.requests[0].body
    assert body["max_tokens"] == 100
    assert "max_completion_tokens" not in body


def test_tool_calls_round_trip(server: WireServer, openai_model: MakeModel, tool_round: ModelRequest) -> None:
    server.push({"tool_calls": [{"id": "call_c", "name": "finish", "arguments": {"summary": "Fixed."}}]})
    response = asyncio.run(openai_model().complete(tool_round))
    assert response.text == ""
    assert response.tool_calls == (ToolCall.parse("call_c", "finish", '{"summary": "Fixed."}'),)
    assert response.stop_reason == "tool_calls"
    body = server.requests[0].body
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    }
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file", "finish"]
    system, user, assistant, result_a, result_b = body["messages"]
    assert system == {"role": "system", "content": "You are a coding agent."}
    assert user == {"role": "user", "content": "Fix the bug."}
    assert assistant == {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": '{"path": '}},
        ],
    }
    assert result_a == {"role": "tool", "tool_call_id": "call_a", "content": "def a(): pass"}
    assert result_b == {"role": "tool", "tool_call_id": "call_b", "content": "malformed arguments"}


def test_usage_counts_cached_tokens(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"text": "ok", "usage": {"input_tokens": 1000, "output_tokens": 20, "cached_tokens": 800}})
    response = asyncio.run(openai_model().complete(hello))
    assert response.usage == Usage(input_tokens=1000, output_tokens=20, cached_tokens=800)


def test_malformed_tool_call_json_survives(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"tool_calls": [{"id": "call_m", "name": "read_file", "arguments": '{"path": "a.py"'}]})
    response = asyncio.run(openai_model().complete(hello))
    [call] = response.tool_calls
    assert (call.id, call.name, call.arguments, call.raw_arguments) == ("call_m", "read_file", None, '{"path": "a.py"')


def test_reply_without_usage_or_choices(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    message = {"role": "assistant", "content": "hi"}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    reply = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]}
    server.push({"raw": reply}, {"raw": {**reply, "choices": []}})
    model = openai_model()
    assert asyncio.run(model.complete(hello)).usage == Usage()
    with pytest.raises(ModelError, match="openai:gpt-test returned no choices"):
        asyncio.run(model.complete(hello))


def test_401_is_a_bad_key_and_not_retried(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"status": 401, "message": "Incorrect API key provided: sk-test."})
    with pytest.raises(BadApiKey, match=r"rejected the API key \(401\): check OPENAI_API_KEY"):
        asyncio.run(openai_model().complete(hello))
    assert len(server.requests) == 1


def test_404_is_an_unknown_model(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"status": 404, "message": "The model `gpt-test` does not exist."})
    with pytest.raises(UnknownModel, match="does not know model 'gpt-test'") as caught:
        asyncio.run(openai_model().complete(hello))
    assert "\n" not in str(caught.value)
    assert len(server.requests) == 1


def test_model_not_found_code_is_an_unknown_model(
    server: WireServer, openai_model: MakeModel, hello: ModelRequest
) -> None:
    server.push({"status": 400, "message": "no such model", "code": "model_not_found"})
    with pytest.raises(UnknownModel, match="gpt-test"):
        asyncio.run(openai_model().complete(hello))


def test_other_4xx_carries_the_server_message(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"status": 400, "message": "messages[1].content:\n too long"})
    with pytest.raises(ModelError, match=r"rejected the request \(400\): messages\[1\].content: too long$") as caught:
        asyncio.run(openai_model().complete(hello))
    assert type(caught.value) is ModelError
    assert len(server.requests) == 1


def test_429_waits_as_told_then_succeeds(
    server: WireServer, openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, retries: Retries
) -> None:
    server.push({"status": 429, "message": "Rate limit reached.", "headers": {"retry-after-ms": "10"}}, {"text": "ok"})
    response = asyncio.run(openai_model().complete(hello, on_retry=retries))
    assert response.text == "ok"
    assert sleep.waits == [0.01]
    [(attempt, wait, reason)] = retries.calls
    assert (attempt, wait) == (1, 0.01)
    assert reason == "rate limited (429): Rate limit reached."
    assert len(server.requests) == 2


def test_exhausted_quota_is_not_retried(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push({"status": 429, "message": "You exceeded your current quota.", "code": "insufficient_quota"})
    with pytest.raises(ModelError, match=r"rejected the request \(429\): You exceeded your current quota.$"):
        asyncio.run(openai_model().complete(hello))
    assert len(server.requests) == 1


def test_500_twice_then_success(
    server: WireServer, openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep, retries: Retries
) -> None:
    server.push({"status": 500, "message": "boom"}, {"status": 502, "message": "bad gateway"}, {"text": "ok"})
    response = asyncio.run(openai_model().complete(hello, on_retry=retries))
    assert response.text == "ok"
    assert [a for a, _, _ in retries.calls] == [1, 2]
    assert 0.5 <= sleep.waits[0] <= 1.0
    assert 1.0 <= sleep.waits[1] <= 2.0
    assert len(server.requests) == 3


def test_retries_exhausted(server: WireServer, openai_model: MakeModel, hello: ModelRequest) -> None:
    server.push(*[{"status": 503, "message": "overloaded"}] * 3)
    with pytest.raises(ModelError, match=r"failed after 2 retries: server error \(503\): overloaded"):
        asyncio.run(openai_model(max_retries=2).complete(hello))
    assert len(server.requests) == 3


def test_timeout_is_retried(openai_model: MakeModel, hello: ModelRequest, retries: Retries) -> None:
    calls: list[str] = []

    def slow_once(fmt: str, body: dict[str, Any]) -> dict[str, Any]:
        calls.append(fmt)
        if len(calls) == 1:
            time.sleep(0.5)
        return {"text": "late"}

    with WireServer(slow_once) as slow:
        url = slow.openai_url
        response = asyncio.run(openai_model(base_url=url, timeout=0.2).complete(hello, on_retry=retries))
    assert response.text == "late"
    assert len(calls) == 2
    assert retries.calls[0][2] == f"no reply from {url} within 0.2s"


def test_connection_refused_names_the_url(openai_model: MakeModel, hello: ModelRequest, sleep: FakeSleep) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    with pytest.raises(ModelError, match=f"nothing is listening at {url}: is the server running\\?$"):
        asyncio.run(openai_model(base_url=url, max_retries=1).complete(hello))
    assert sleep.waits == []


def test_wire_server_answers_an_unscripted_request_clearly(
    server: WireServer, openai_model: MakeModel, hello: ModelRequest
) -> None:
    with pytest.raises(ModelError, match=r"\(418\): wire server has no reply queued for request 1$"):
        asyncio.run(openai_model().complete(hello))
    assert server.pending == 0
