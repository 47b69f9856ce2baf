"""Streamed replies put back together: the events of each wire format, assembled into the body the same call
without streaming returns, which the provider then reads as it reads any body (`_reply`'s rules apply alike).

A stream must end as its format says (`[DONE]`, `message_stop`, `response.completed`); one that ends before
is cut off, and an event that comes before the one it belongs to is out of order: both raise `BadReplyBody`,
so the call is made again from the start and what had arrived is dropped. An error event does the same. The
text of a reply is told to the `TextHook` piece by piece as it arrives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from plait.messages import BadReplyBody, TextHook
from plait.models._reply import field, one_line
from plait.models._sse import Event, events

__all__ = ["AnthropicStream", "ChatStream", "ResponsesStream", "Stream", "assemble"]


class Stream(Protocol):
    """Assembles one format's events into its reply body."""

    @property
    def finished(self) -> bool: ...

    def feed(self, event: Event) -> None: ...

    def body(self) -> dict[str, Any]: ...


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _index(value: Any, fallback: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 20 else fallback


def _stream_error(data: dict[str, Any]) -> BadReplyBody:
    message = field(data, "error", "message") or field(data, "message") or field(data, "error")
    what = one_line(message, 300) if isinstance(message, str) and message.strip() else "no message"
    return BadReplyBody(f"an error in the streamed reply: {what}")


class ChatStream:
    """Chat Completions chunks: deltas of the first choice, tool calls by index, usage in the last chunk."""

    def __init__(self, on_text: TextHook | None = None) -> None:
        self._on_text = on_text
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: Any = None
        self._usage: Any = None
        self._choices = False
        self._done = False

    @property
    def finished(self) -> bool:
        """`[DONE]` came, or (from a server that leaves it out) a finish reason and the usage."""
        return self._done or (self._finish is not None and self._usage is not None)

    def feed(self, event: Event) -> None:
        if event.done:
            self._done = True
            return
        if "error" in event.data:
            raise _stream_error(event.data)
        if isinstance(event.data.get("usage"), dict):
            self._usage = event.data["usage"]
        choices = event.data.get("choices")
        if not isinstance(choices, list) or not choices:
            return
        self._choices = True
        choice = choices[0]
        if field(choice, "finish_reason") is not None:
            self._finish = field(choice, "finish_reason")
        delta = field(choice, "delta")
        if text := _text(field(delta, "content")):
            self._text.append(text)
            if self._on_text is not None:
                self._on_text(text)
        self._refusal.append(_text(field(delta, "refusal")))
        calls = field(delta, "tool_calls")
        for position, call in enumerate(calls if isinstance(calls, list) else ()):
            self._call(call, position)

    def _call(self, delta: Any, position: int) -> None:
        index = _index(field(delta, "index"), len(self._calls) + position)
        call = self._calls.setdefault(index, {"id": "", "type": "function", "name": "", "arguments": []})
        call["id"] = call["id"] or _text(field(delta, "id"))
        call["name"] = call["name"] or _text(field(delta, "function", "name"))
        call["arguments"].append(_text(field(delta, "function", "arguments")))

    def body(self) -> dict[str, Any]:
        calls = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": "".join(c["arguments"])},
            }
            for _, c in sorted(self._calls.items())
        ]
        message = {"content": "".join(self._text), "refusal": "".join(self._refusal), "tool_calls": calls}
        choices = [{"message": message, "finish_reason": self._finish}] if self._choices else []
        return {"choices": choices, "usage": self._usage}


class AnthropicStream:
    """Messages events: `message_start`, content blocks started, grown by deltas and stopped, `message_delta`."""

    def __init__(self, on_text: TextHook | None = None) -> None:
        self._on_text = on_text
        self._message: dict[str, Any] | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self.finished = False

    def feed(self, event: Event) -> None:
        kind = event.data.get("type", event.name)
        if kind == "error":
            raise _stream_error(event.data)
        if kind == "ping":
            return
        if kind == "message_start":
            message = event.data.get("message")
            self._message = dict(message) if isinstance(message, dict) else {}
            usage = self._message.get("usage")
            self._usage = dict(usage) if isinstance(usage, dict) else {}
            return
        if self._message is None or self.finished:
            raise BadReplyBody(f"the streamed reply is out of order: {one_line(str(kind), 60)} before message_start")
        if kind == "content_block_start":
            self._start(event.data)
        elif kind == "content_block_delta":
            self._delta(event.data)
        elif kind == "message_delta":
            self._message["stop_reason"] = field(event.data, "delta", "stop_reason")
            if isinstance(usage := event.data.get("usage"), dict):
                self._usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.finished = True

    def _start(self, data: dict[str, Any]) -> None:
        block = data.get("content_block")
        index = _index(data.get("index"), len(self._blocks))
        if isinstance(block, dict):
            self._blocks[index] = dict(block)

    def _delta(self, data: dict[str, Any]) -> None:
        index = _index(data.get("index"), -1)
        block, delta = self._blocks.get(index), data.get("delta")
        if block is None:
            raise BadReplyBody("the streamed reply is out of order: a delta for a block that was never started")
        kind = field(delta, "type")
        if kind == "text_delta" and (text := _text(field(delta, "text"))):
            block["text"] = _text(block.get("text")) + text
            if self._on_text is not None:
                self._on_text(text)
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(_text(field(delta, "partial_json")))

    def body(self) -> dict[str, Any]:
        message = dict(self._message or {})
        for index, parts in self._json.items():
            self._blocks[index]["input"] = "".join(parts) or "{}"
        message["content"] = [block for _, block in sorted(self._blocks.items())]
        message["usage"] = self._usage
        return message


_TERMINAL = ("response.completed", "response.incomplete")


class ResponsesStream:
    """Responses API events: output items added, grown and done by `output_index`, then the final response."""

    def __init__(self, on_text: TextHook | None = None) -> None:
        self._on_text = on_text
        self._items: dict[int, Any] = {}
        self._response: dict[str, Any] | None = None
        self._started = False
        self.finished = False

    def feed(self, event: Event) -> None:
        kind = _text(event.data.get("type")) or event.name
        if kind in ("error", "response.failed"):
            raise _stream_error(field(event.data, "response") or event.data)
        if kind in ("response.created", "response.in_progress"):
            self._started = True
            return
        if not self._started or self.finished:
            raise BadReplyBody(f"the streamed reply is out of order: {one_line(kind, 60)} before response.created")
        if kind == "response.output_text.delta" and (text := _text(event.data.get("delta"))):
            if self._on_text is not None:
                self._on_text(text)
        elif kind in ("response.output_item.added", "response.output_item.done"):
            index = _index(event.data.get("output_index"), len(self._items))
            if kind.endswith(".done") or index not in self._items:
                self._items[index] = event.data.get("item")
        elif kind in _TERMINAL:
            response = event.data.get("response")
            self._response = dict(response) if isinstance(response, dict) else {}
            self.finished = True

    def body(self) -> dict[str, Any]:
        response = dict(self._response or {})
        output = response.get("output")
        if not (isinstance(output, list) and output) and self._items:
            response["output"] = [item for _, item in sorted(self._items.items())]
        return response


async def assemble(chunks: AsyncIterator[bytes], stream: Stream, end: str) -> dict[str, Any]:
    """The reply body `stream` assembles from the events in `chunks`.

    Raises:
        BadReplyBody: An event is not JSON, an error, or out of order; or the stream ended before its end.
    """
    async for event in events(chunks):
        stream.feed(event)
        if stream.finished:
            break
    if not stream.finished:
        raise BadReplyBody(f"the streamed reply was cut off before its {end}")
    return stream.body()
