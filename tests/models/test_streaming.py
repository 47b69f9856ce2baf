"""Every provider streams: the same reply as without streaming, its text told as it arrives, a stream cut mid-way
made again in full, silence bounded between chunks rather than over the whole reply, and a cancelled call that
closes its connection. Through the real SDKs over real HTTP to the local wire server, which streams as each API."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from plait.agent.journal import ModelCallJournal
from plait.errors import ModelError
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, TextStreaming, ToolCall, Usage
from plait.models import AnthropicModel, OpenAIModel, OpenAIResponsesModel, PriceTable, ScriptedModel
from wire_server import Reply, WireServer

if TYPE_CHECKING:
    from conftest import FakeSleep, Retries

FORMATS = ["openai", "responses", "anthropic"]
REPLY: Reply = {
    "text": "Reading the file first.",
    "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "src/a.py"}}],
    "usage": {"input_tokens": 40, "output_tokens": 9, "cached_tokens": 8},
}


def _model(fmt: str, server: WireServer, sleep: FakeSleep, **options: Any) -> TextStreaming:
    settings: dict[str, Any] = {"api_key": "k", "timeout": 5.0, "max_retries": 3, "sleep": sleep, **options}
    if fmt == "anthropic":
        return AnthropicModel("anthropic:m", "m", base_url=server.url, **settings)
    kind = OpenAIResponsesModel if fmt == "responses" else OpenAIModel
    return kind(f"{fmt}:m", "m", base_url=server.openai_url, **settings)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_streamed_reply_is_the_reply_without_streaming(
    server: WireServer, sleep: FakeSleep, tool_round: ModelRequest, fmt: str
) -> None:
    server.push(REPLY, {**REPLY, "stream": False})
    pieces: list[str] = []
    model = _model(fmt, server, sleep)
    streamed = asyncio.run(model.complete(tool_round, on_text=pieces.append))
    whole = asyncio.run(model.complete(tool_round))
    assert streamed == whole
    assert streamed.text == "Reading the file first."
    assert streamed.tool_calls == (ToolCall.parse("call_1", "read_file", '{"path": "src/a.py"}'),)
    assert streamed.usage == Usage(input_tokens=40, output_tokens=9, cached_tokens=8)
    assert len(pieces) > 1 and "".join(pieces) == streamed.text
    assert all(request.body["stream"] is True for request in server.requests)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stream_cut_mid_way_is_made_again_in_full(
    server: WireServer, sleep: FakeSleep, retries: Retries, tool_round: ModelRequest, fmt: str
) -> None:
    server.push({**REPLY, "cut": 4}, REPLY)
    pieces: list[str] = []
    response = asyncio.run(_model(fmt, server, sleep).complete(tool_round, on_retry=retries, on_text=pieces.append))
    assert response.text == "Reading the file first."
    assert response.tool_calls[0].arguments == {"path": "src/a.py"}
    assert len(server.requests) == 2
    [(attempt, _, reason)] = retries.calls
    assert attempt == 1 and "broke off" in reason


@pytest.mark.parametrize("fmt", FORMATS)
def test_streams_cut_every_time_give_up_in_one_line(
    server: WireServer, sleep: FakeSleep, tool_round: ModelRequest, fmt: str
) -> None:
    server.push(*[{**REPLY, "cut": 3}] * 3)
    with pytest.raises(ModelError) as caught:
        asyncio.run(_model(fmt, server, sleep, max_retries=2).complete(tool_round))
    assert "after 2 retries" in str(caught.value) and "\n" not in str(caught.value)
    assert len(server.requests) == 3


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_timeout_bounds_the_silence_between_chunks_not_the_reply(
    server: WireServer, sleep: FakeSleep, hello: ModelRequest, fmt: str
) -> None:
    # 6 events at least, 0.6 s apart: 3.6 s in all, over the 3 s timeout, while no silence comes near it (a loaded
    # machine has 2.4 s of slack per gap before the test could fail for a reason that is not plait's)
    server.push({"text": "A long reply.", "gap": 0.6})
    started = time.monotonic()
    response = asyncio.run(_model(fmt, server, sleep, timeout=3.0, max_retries=0).complete(hello))
    assert response.text == "A long reply."
    assert time.monotonic() - started > 3.0  # the reply took longer than the timeout, and still came


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cancelled_call_closes_its_connection_mid_reply(
    server: WireServer, sleep: FakeSleep, hello: ModelRequest, fmt: str
) -> None:
    first_text = {"openai": 2, "responses": 4, "anthropic": 4}[fmt]
    server.push({"text": "Never finished.", "hold": first_text})

    async def cancel_mid_reply() -> None:
        arrived = asyncio.Event()
        model = _model(fmt, server, sleep, timeout=60.0)
        call = asyncio.create_task(model.complete(hello, on_text=lambda _: arrived.set()))
        await arrived.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(asyncio.wait_for(cancel_mid_reply(), 30))
    deadline = time.monotonic() + 30
    while server.hangups == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.hangups == 1


def test_a_model_that_streams_says_so(server: WireServer, sleep: FakeSleep) -> None:
    assert all(isinstance(_model(fmt, server, sleep), TextStreaming) for fmt in FORMATS)


def test_the_journal_tells_the_text_as_it_arrives_and_logs_only_the_reply(
    server: WireServer, sleep: FakeSleep, hello: ModelRequest, tmp_path: Path
) -> None:
    server.push(REPLY)
    store = SQLiteEventStore(tmp_path / "e.db")
    pieces: list[str] = []
    journal = ModelCallJournal(RunLog(store, "r"), "a", PriceTable())
    response, _ = asyncio.run(journal.complete(_model("openai", server, sleep), hello, on_text=pieces.append))
    assert "".join(pieces) == response.text and len(pieces) > 1
    assert [event.kind for event in store.events("r")] == ["model_request", "model_response"]


def test_the_journal_asks_a_model_that_does_not_stream_as_before(tmp_path: Path, hello: ModelRequest) -> None:
    journal = ModelCallJournal(RunLog(SQLiteEventStore(tmp_path / "e.db"), "r"), "a", PriceTable())
    pieces: list[str] = []
    response, _ = asyncio.run(journal.complete(ScriptedModel([{"text": "hi"}]), hello, on_text=pieces.append))
    assert response.text == "hi" and pieces == []
