"""The OpenAI Responses API provider, through the real SDK over real HTTP to the local wire server: the
conversation as input items, replies read back, reasoning items kept across turns and through the log, the
spec that picks it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from plait.agent.journal import ModelCallJournal
from plait.errors import BadApiKey, ModelError
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.mcp._checks import model_spec
from plait.messages import (
    STOP_LENGTH,
    STOP_REFUSAL,
    SYSTEM_BREAK,
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    Reasoning,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from plait.models import OpenAIModel, OpenAIResponsesModel, PriceTable, make_model
from plait.settings import Settings
from wire_server import WireServer
from wire_stream import sse

if TYPE_CHECKING:
    from conftest import FakeSleep


def _model(server: WireServer, sleep: FakeSleep, **options: Any) -> OpenAIResponsesModel:
    settings: dict[str, Any] = {"api_key": "sk-test", "timeout": 5.0, "max_retries": 2, "sleep": sleep, **options}
    return OpenAIResponsesModel("openai:gpt-test", "gpt-test", base_url=server.openai_url, **settings)


def test_the_conversation_goes_as_input_items(server: WireServer, sleep: FakeSleep, tool_round: ModelRequest) -> None:
    server.push({"tool_calls": [{"id": "call_c", "name": "finish", "arguments": {"summary": "Fixed."}}]})
    request = tool_round.model_copy(update={"system": f"Shared.{SYSTEM_BREAK}Own.", "tool_choice": "finish"})
    response = asyncio.run(_model(server, sleep).complete(request))
    assert response.tool_calls == (ToolCall.parse("call_c", "finish", '{"summary": "Fixed."}'),)
    [sent] = server.requests
    assert sent.path == "/v1/responses"
    body = sent.body
    assert body["instructions"] == "Shared.Own."
    assert body["input"] == [
        {"type": "message", "role": "user", "content": "Fix the bug."},
        {"type": "message", "role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": '{"path": "a.py"}'},
        {"type": "function_call", "call_id": "call_b", "name": "read_file", "arguments": '{"path": '},
        {"type": "function_call_output", "call_id": "call_a", "output": "def a(): pass"},
        {"type": "function_call_output", "call_id": "call_b", "output": "malformed arguments"},
    ]
    assert body["tools"][0] == {
        "type": "function",
        "name": "read_file",
        "description": "Read a file of the repository.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "strict": False,
    }
    assert body["tool_choice"] == {"type": "function", "name": "finish"}
    assert body["max_output_tokens"] == 256
    assert (body["store"], body["include"], body["stream"]) == (False, ["reasoning.encrypted_content"], True)
    assert body["prompt_cache_key"].startswith("plait-")


def test_usage_and_stop_reasons(server: WireServer, sleep: FakeSleep, hello: ModelRequest) -> None:
    usage = {"input_tokens": 2000, "output_tokens": 7, "cached_tokens": 1536}
    server.push({"text": "Hi.", "usage": usage}, {"text": "Cut", "stop_reason": "length"})
    model = _model(server, sleep)
    first = asyncio.run(model.complete(hello))
    assert (first.text, first.stop_reason) == ("Hi.", "completed")
    assert first.usage == Usage(input_tokens=2000, output_tokens=7, cached_tokens=1536)
    assert asyncio.run(model.complete(hello)).stop_reason == STOP_LENGTH


def test_a_refusal(server: WireServer, sleep: FakeSleep, hello: ModelRequest) -> None:
    refusal = {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't."}]}
    server.push({"raw": {"status": "completed", "output": [refusal], "usage": {"input_tokens": 3}}})
    response = asyncio.run(_model(server, sleep).complete(hello))
    assert (response.text, response.stop_reason) == ("I can't.", STOP_REFUSAL)


def test_errors_are_those_of_openai(server: WireServer, sleep: FakeSleep, hello: ModelRequest) -> None:
    server.push({"status": 429, "message": "slow down"}, {"text": "ok"}, {"status": 401, "message": "bad key"})
    model = _model(server, sleep)
    assert asyncio.run(model.complete(hello)).text == "ok"
    with pytest.raises(BadApiKey, match="check OPENAI_API_KEY"):
        asyncio.run(model.complete(hello))


def test_an_error_event_mid_stream_is_retried(server: WireServer, sleep: FakeSleep, hello: ModelRequest) -> None:
    error = {"type": "response.failed", "response": {"error": {"message": "overloaded"}}}
    failed = sse("response.created", {"type": "response.created", "response": {}}) + sse("response.failed", error)
    server.push({"body": failed, "headers": {"content-type": "text/event-stream"}}, {"text": "ok"})
    retried: list[str] = []
    response = asyncio.run(_model(server, sleep).complete(hello, on_retry=lambda a, w, why: retried.append(why)))
    assert response.text == "ok"
    assert retried == ["unreadable reply body: an error in the streamed reply: overloaded"]


REASONED = {
    "reasoning": [
        {"encrypted_content": "gAAAA-secret-thoughts", "summary": [{"type": "summary_text", "text": "Plan."}]}
    ],
    "tool_calls": [{"id": "call_r", "name": "read_file", "arguments": {"path": "a.py"}}],
}


def test_reasoning_items_go_back_before_their_turn(
    server: WireServer, sleep: FakeSleep, hello: ModelRequest, tmp_path: Path
) -> None:
    server.push(REASONED, {"text": "Done."})
    model = _model(server, sleep)
    first = asyncio.run(model.complete(hello))
    assert first.reasoning == (Reasoning(id="rs_1_0", encrypted_content="gAAAA-secret-thoughts", summary=("Plan.",)),)
    result = ToolResultMessage(call_id="call_r", name="read_file", content="x = 1")
    follow = hello.model_copy(update={"messages": (*hello.messages, first.as_message(), result)})
    asyncio.run(model.complete(follow))
    sent = server.requests[1].body["input"]
    assert sent[1] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Plan."}],
        "encrypted_content": "gAAAA-secret-thoughts",
    }
    assert sent[2]["type"] == "function_call" and sent[3]["type"] == "function_call_output"


def test_a_resumed_agent_sends_the_reasoning_it_sent_before(
    server: WireServer, sleep: FakeSleep, hello: ModelRequest, tmp_path: Path
) -> None:
    """The reply is logged with its reasoning: read back, it makes the same next request, to the byte."""
    server.push(REASONED)
    store = SQLiteEventStore(tmp_path / "e.db")
    first, _ = asyncio.run(
        ModelCallJournal(RunLog(store, "r"), "a", PriceTable()).complete(_model(server, sleep), hello)
    )
    replay = ModelCallJournal(RunLog(store, "r"), "a", PriceTable())
    again, _ = asyncio.run(replay.complete(_model(server, sleep), hello))
    assert again == first and again.reasoning and replay.replayed == 1
    result = ToolResultMessage(call_id="call_r", name="read_file", content="x = 1")
    live = hello.model_copy(update={"messages": (*hello.messages, first.as_message(), result)})
    resumed = hello.model_copy(update={"messages": (*hello.messages, again.as_message(), result)})
    assert live.fingerprint() == resumed.fingerprint()


def test_a_turn_without_reasoning_hashes_as_it_always_did() -> None:
    """Logs written before reasoning was kept still match their requests on resume."""
    message = AssistantMessage(text="a", tool_calls=(ToolCall.parse("c", "f", "{}"),))
    assert "reasoning" not in message.model_dump_json()
    assert "reasoning" not in ModelResponse(text="a").model_dump_json()
    assert ModelResponse.model_validate_json('{"text": "a"}').as_message() == AssistantMessage(text="a")


@pytest.mark.parametrize(
    ("spec", "env", "kind"),
    [
        ("openai:gpt-5", {}, OpenAIResponsesModel),
        ("openai:gpt-5", {"OPENAI_BASE_URL": "https://api.openai.com/v1/"}, OpenAIResponsesModel),
        ("openai:gpt-5", {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, OpenAIModel),
        ("openai-responses:gpt-5", {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, OpenAIResponsesModel),
        ("openai-chat:gpt-5", {}, OpenAIModel),
        ("openai-compatible:qwen@http://127.0.0.1:9/v1", {}, OpenAIModel),
    ],
)
def test_the_spec_picks_the_api(spec: str, env: dict[str, str], kind: type[OpenAIModel]) -> None:
    model = make_model(spec, Settings(), env={"OPENAI_API_KEY": "sk", **env})
    assert type(model.model()) is kind
    assert model.name == spec


def test_prices_are_the_same_whichever_api() -> None:
    prices, usage = PriceTable(), Usage(input_tokens=1000, output_tokens=1000)
    assert prices.cost("openai-responses:gpt-5", usage) == prices.cost("openai:gpt-5", usage) > 0
    assert prices.cost("openai-chat:gpt-5", usage) == prices.cost("openai:gpt-5", usage)


def test_a_200_that_failed_is_retried_then_reported(server: WireServer, sleep: FakeSleep, hello: ModelRequest) -> None:
    failed = {"raw": {"status": "failed", "error": {"message": "server had an error"}}}
    server.push(failed, failed, failed)
    with pytest.raises(ModelError, match="after 2 retries: unreadable reply body: an error in a 200: server had an"):
        asyncio.run(_model(server, sleep).complete(hello))


def test_user_messages_are_kept_in_order(server: WireServer, sleep: FakeSleep) -> None:
    server.push({"text": "ok"})
    messages = (UserMessage(text="one"), AssistantMessage(text=""), UserMessage(text="two"))
    asyncio.run(_model(server, sleep).complete(ModelRequest(system="", messages=messages)))
    body = server.requests[0].body
    assert "instructions" not in body
    assert [item["content"] for item in body["input"]] == ["one", "two"]


@pytest.mark.parametrize("spec", ["openai-responses:gpt-5", "openai-chat:gpt-5"])
def test_an_mcp_client_may_choose_either_api(spec: str, tmp_path: Path) -> None:
    assert model_spec(tmp_path, spec, "anthropic:claude-sonnet-4-5") == spec
