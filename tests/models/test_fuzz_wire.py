"""Seeded hostile replies over the three wire formats, through the real SDKs and a real HTTP server.

Every reply either yields a `ModelResponse` that serialises and reads back equal, within the stated caps,
or raises `ModelError` with a one-line message; any other exception is a bug at the wire boundary. Every call
asks for a stream: a reply comes as a whole body (as a server that does not stream answers) or as hostile
server-sent events: cut off, a chunk of bad JSON or of JSON that is no object, events out of order, dropped or
repeated, CR or CRLF line ends, comments and events that say nothing.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from plait.errors import ModelError
from plait.messages import Model, ModelRequest, ModelResponse, UserMessage
from plait.models import AnthropicModel, OpenAIModel, OpenAIResponsesModel
from wire_server import Reply, WireServer

SEED = 20261201
BLOCKS = 8
CASES = 25
"""Cases per block and format: 3 × 8 × 25 = 600 replies."""
FORMATS = ["openai", "responses", "anthropic"]

TEXT_BOUND = (1 << 20) + 200
"""Longest text a response may carry: the 1 MiB cap and its marker."""
ARGUMENTS_BOUND = (256 << 10) + 200
"""Longest raw arguments a call may carry: the 256 KiB cap (an excerpt stands in for anything longer)."""

SURROGATES = ["\ud800.txt", "a\udfffb", "\udbff", "\udc00\ud800"]
STRINGS = ["", "ok", "src/a.py", "\x00\x1b[31mred", "😀", "é" * 40, "line\nbreak", " " * 10]
JUNK: list[Any] = [None, 0, -1, 1.5, True, "x", [], {}, [1, "a"], {"a": None}, "\ud800"]
COUNTS: list[Any] = [0, 7, 12345, -5, "12", "x", None, 1.5, 10**30, True, [], {}, -(10**20)]
OPENAI_STOPS: list[Any] = ["stop", "length", "tool_calls", "content_filter", "function_call", None, "", 3, "?" * 300]
RESPONSES_STATUS: list[Any] = ["completed", "incomplete", "failed", "in_progress", None, 5, "?" * 300]
ANTHROPIC_STOPS: list[Any] = ["end_turn", "max_tokens", "tool_use", "refusal", "pause_turn", "stop_sequence", None, 7]
DEPTHS = [2, 70, 600, 1000, 3000]
BODIES: list[tuple[bytes, str]] = [
    (b"<html>502 Bad Gateway</html>", "text/html"),
    (b"<html>502 Bad Gateway</html>", "application/json"),
    (b"[]", "application/json"),
    (b"null", "application/json"),
    (b'"just a string"', "application/json"),
    (b"42", "application/json"),
    (b"{}", "application/json"),
    (b"", "application/json"),
    (b'{"choices": [', "application/json"),
    (b'{"id": "\xff\xfe\xed\xa0\x80"}', "application/json"),
    (b"\xff\xfe\x00garbage", "application/octet-stream"),
    (b"[" * 5000 + b"]" * 5000, "application/json"),
    (b'{"a": NaN, "b": Infinity}', "application/json"),
    (b'{"ok": true}', "text/plain"),
]


def _junk(rng: random.Random) -> Any:
    """A junk value of its own, so that mutating one reply cannot change another."""
    return copy.deepcopy(rng.choice(JUNK))


def _deep_text(depth: int, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return '{"a": ' * depth + "1" + "}" * depth
    return '{"a": ' + "[" * depth + "]" * depth + "}"


def _string(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(SURROGATES)
    if roll < 0.3:
        return _junk(rng)
    if roll < 0.32:
        return "x" * ((1 << 20) + rng.randint(1, 5000))
    return rng.choice(STRINGS)


class Hostile:
    """Builds replies; deep values are spliced into the JSON text, too deep for `json.dumps` to write."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.splices: dict[str, str] = {}

    def deep(self) -> str:
        key = f"__deep_{len(self.splices)}__"
        self.splices[key] = _deep_text(self.rng.choice(DEPTHS), self.rng)
        return key

    def arguments_value(self) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.2:
            return self.deep()
        if roll < 0.25:
            return {"content": "y" * ((256 << 10) + rng.randint(1, 999))}
        if roll < 0.3:
            return {"x": rng.choice([10**40, 1e300, -0.0])}
        if roll < 0.4:
            return _junk(rng)
        return {_string(rng) if rng.random() < 0.2 else "path": _string(rng), "n": rng.choice([1, [1, {"b": 2}]])}

    def openai_arguments(self) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            return _deep_text(rng.choice(DEPTHS), rng)
        if roll < 0.25:
            return rng.choice(['{"path": ', "[1, 2]", "null", '{"x": NaN}', '{"x": 1e400}', "", "\ud800"])
        if roll < 0.3:
            return '{"path": "\ud800.txt"}'
        if roll < 0.35:
            return _junk(rng)
        value = self.arguments_value()
        if isinstance(value, str) and value in self.splices:
            return self.splices.pop(value)
        return json.dumps(value)

    def mutate(self, body: Any, times: int) -> None:
        """Replace or drop `times` values anywhere in `body` with junk."""
        for _ in range(times):
            path: list[tuple[Any, Any]] = []
            node = body
            while isinstance(node, dict | list) and node and self.rng.random() < 0.8:
                key = self.rng.choice(list(node)) if isinstance(node, dict) else self.rng.randrange(len(node))
                path.append((node, key))
                node = node[key]
            if not path:
                return
            parent, key = path[-1]
            if isinstance(parent, dict) and self.rng.random() < 0.3:
                del parent[key]
            else:
                parent[key] = _junk(self.rng)

    def encode(self, body: Any) -> bytes:
        text = json.dumps(body)
        for key, deep in self.splices.items():
            text = text.replace(json.dumps(key), deep)
        return text.encode()


def openai_reply(h: Hostile) -> Any:
    rng = h.rng
    message: dict[str, Any] = {"role": "assistant", "content": _string(rng) if rng.random() < 0.6 else None}
    if rng.random() < 0.6:
        message["tool_calls"] = [
            {
                "id": _string(rng) if rng.random() < 0.2 else f"call_{i}",
                "type": "function" if rng.random() < 0.9 else _string(rng),
                "function": {
                    "name": _string(rng) if rng.random() < 0.3 else "read_file",
                    "arguments": h.openai_arguments(),
                },
            }
            for i in range(rng.randint(0, 3))
        ]
    if rng.random() < 0.15:
        message["refusal"] = _string(rng)
    usage: dict[str, Any] = {
        "prompt_tokens": rng.choice(COUNTS),
        "completion_tokens": rng.choice(COUNTS),
        "total_tokens": rng.choice(COUNTS),
    }
    if rng.random() < 0.5:
        usage["prompt_tokens_details"] = rng.choice([{"cached_tokens": rng.choice(COUNTS)}, None, "x", []])
    choice = {"index": 0, "message": message, "finish_reason": rng.choice(OPENAI_STOPS)}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [choice],
        "usage": rng.choice([usage, usage, {}, None, "x", {"prompt_tokens": "9", "completion_tokens": "1"}]),
    }


def anthropic_reply(h: Hostile) -> Any:
    rng = h.rng
    content: list[Any] = []
    for i in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.4:
            content.append({"type": "text", "text": _string(rng)})
        elif roll < 0.85:
            name = _string(rng) if rng.random() < 0.3 else "read_file"
            content.append({"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": h.arguments_value()})
        else:
            content.append(rng.choice([{"type": "thinking", "thinking": "hm", "signature": "s"}, {"type": "?"}, 5]))
    usage: Any = {"input_tokens": rng.choice(COUNTS), "output_tokens": rng.choice(COUNTS)}
    if rng.random() < 0.4:
        usage["cache_read_input_tokens"] = rng.choice(COUNTS)
        usage["cache_creation_input_tokens"] = rng.choice(COUNTS)
    if rng.random() < 0.3:
        usage = rng.choice([None, {}, {"input_tokens": 3}, "x", {"output_tokens": -2}])
    body: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": rng.choice(ANTHROPIC_STOPS),
        "stop_sequence": None,
        "usage": usage,
    }
    if usage is None:
        del body["usage"]
    return body


def _responses_item(h: Hostile, i: int) -> Any:
    rng = h.rng
    roll = rng.random()
    if roll < 0.35:
        part = rng.choice([{"type": "output_text", "text": _string(rng)}, {"type": "refusal", "refusal": _string(rng)}])
        return {"type": "message", "role": "assistant", "content": [part, _junk(rng)][: rng.randint(1, 2)]}
    if roll < 0.75:
        call_id = _string(rng) if rng.random() < 0.2 else f"call_{i}"
        name = _string(rng) if rng.random() < 0.3 else "read_file"
        return {"type": "function_call", "call_id": call_id, "name": name, "arguments": h.openai_arguments()}
    if roll < 0.9:
        summary = [{"type": "summary_text", "text": _string(rng)}] if rng.random() < 0.7 else _junk(rng)
        return {"type": "reasoning", "id": _string(rng), "encrypted_content": _string(rng), "summary": summary}
    return _junk(rng)


def responses_reply(h: Hostile) -> Any:
    rng = h.rng
    usage: Any = {"input_tokens": rng.choice(COUNTS), "output_tokens": rng.choice(COUNTS)}
    if rng.random() < 0.5:
        usage["input_tokens_details"] = rng.choice([{"cached_tokens": rng.choice(COUNTS)}, None, "x", []])
    if rng.random() < 0.2:
        usage = _junk(rng)
    details = rng.choice([None, {"reason": "max_output_tokens"}, {"reason": "content_filter"}, "x", {"reason": 5}])
    return {
        "id": "resp_1",
        "object": "response",
        "status": rng.choice(RESPONSES_STATUS),
        "incomplete_details": details,
        "output": [_responses_item(h, i) for i in range(rng.randint(0, 4))],
        "usage": usage,
    }


def _chat_events(body: Any) -> list[tuple[str, Any]]:
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else {}
    message = choice.get("message") if isinstance(choice, dict) else None
    message = message if isinstance(message, dict) else {}
    events: list[tuple[str, Any]] = []
    delta = {k: v for k, v in message.items() if k != "tool_calls"}
    events.append(("", {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
    calls = message.get("tool_calls")
    for index, call in enumerate(calls if isinstance(calls, list) else [calls]):
        item = {**call, "index": index} if isinstance(call, dict) else call
        events.append(("", {"choices": [{"index": 0, "delta": {"tool_calls": [item]}}]}))
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    events.append(("", {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    events.append(("", {"choices": [], "usage": body.get("usage") if isinstance(body, dict) else None}))
    events.append(("", "[DONE]"))
    return events


def _anthropic_events(body: Any) -> list[tuple[str, Any]]:
    body = body if isinstance(body, dict) else {}
    start = {**body, "content": []}
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": start})]
    content = body.get("content")
    for index, block in enumerate(content if isinstance(content, list) else [content]):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        if isinstance(block, dict) and block.get("type") == "tool_use":
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input"))}
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"stop_reason": body.get("stop_reason")}
    events.append(("message_delta", {"type": "message_delta", "delta": stop, "usage": body.get("usage")}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _responses_events(body: Any, rng: random.Random) -> list[tuple[str, Any]]:
    body = body if isinstance(body, dict) else {}
    events: list[tuple[str, Any]] = [("response.created", {"type": "response.created", "response": {}})]
    output = body.get("output")
    for index, item in enumerate(output if isinstance(output, list) else [output]):
        for kind in ("response.output_item.added", "response.output_item.done"):
            events.append((kind, {"type": kind, "output_index": index, "item": item}))
    final = body if rng.random() < 0.7 else {k: v for k, v in body.items() if k != "output"}
    events.append(("response.completed", {"type": "response.completed", "response": final}))
    return events


def _disorder(events: list[tuple[str, Any]], rng: random.Random) -> None:
    """Break a stream's events as a hostile server or a broken proxy would."""
    roll = rng.random()
    if roll < 0.2 and events:  # cut off
        del events[rng.randrange(len(events)) :]
    elif roll < 0.35 and events:  # bad JSON, or JSON that is no object
        events[rng.randrange(len(events))] = ("", rng.choice(['{"choices": [', "[]", "5", "null", '"x"', "NaN"]))
    elif roll < 0.5 and len(events) > 1:  # out of order
        i, j = rng.sample(range(len(events)), 2)
        events[i], events[j] = events[j], events[i]
    elif roll < 0.6 and events:  # repeated or dropped
        i = rng.randrange(len(events))
        events.insert(i, events[i]) if rng.random() < 0.5 else events.pop(i)


def _sse(h: Hostile, events: list[tuple[str, Any]]) -> bytes:
    rng = h.rng
    end = rng.choice([b"\n", b"\n", b"\r\n", b"\r"])
    out: list[bytes] = []
    for name, data in events:
        text = data.encode() if isinstance(data, str) else h.encode(data)
        if rng.random() < 0.05:
            out.append(b": keepalive" + end + end)
        head = b"event: " + name.encode() + end if name else b""
        out.append(head + b"data: " + text + end + end)
    if rng.random() < 0.1 and out:  # cut in the middle of an event
        out[-1] = out[-1][: rng.randrange(len(out[-1]))]
    return b"".join(out)


def _streamed(fmt: str, h: Hostile, body: Any) -> Reply:
    rng = h.rng
    if fmt == "openai":
        events = _chat_events(body)
    elif fmt == "anthropic":
        events = _anthropic_events(body)
    else:
        events = _responses_events(body, rng)
    if rng.random() < 0.6:
        _disorder(events, rng)
    kind = "text/event-stream" if rng.random() < 0.95 else "text/event-stream; charset=utf-8"
    return {"body": _sse(h, events), "headers": {"content-type": kind}}


def hostile(fmt: str, rng: random.Random) -> Reply:
    """One hostile reply for `fmt`: a malformed body now and then, else a reply of hostile parts, streamed or not."""
    if rng.random() < 0.12:
        data, kind = rng.choice(BODIES)
        return {"body": data, "headers": {"content-type": kind}}
    h = Hostile(rng)
    body = {"openai": openai_reply, "anthropic": anthropic_reply, "responses": responses_reply}[fmt](h)
    if rng.random() < 0.35:
        h.mutate(body, rng.randint(1, 3))
    if rng.random() < 0.5:
        return _streamed(fmt, h, body)
    kind = "application/json" if rng.random() < 0.9 else rng.choice(["text/html", "text/plain", ""])
    return {"body": h.encode(body), "headers": {"content-type": kind}}


def problem(outcome: ModelResponse | BaseException) -> str | None:
    """What is wrong with an outcome, or None when it is one the boundary may give."""
    if isinstance(outcome, ModelError):
        return None if "\n" not in str(outcome) else f"a ModelError of many lines: {str(outcome)[:200]!r}"
    if isinstance(outcome, BaseException):
        return f"raised {type(outcome).__name__}: {str(outcome)[:200]}"
    try:
        back = ModelResponse.model_validate_json(outcome.model_dump_json())
    except Exception as exc:  # the point of the check: any failure to serialise is the bug
        return f"does not serialise: {type(exc).__name__}: {str(exc)[:200]}"
    if back != outcome:
        return "does not read back equal"
    if min(outcome.usage.model_dump().values()) < 0:
        return f"negative usage {outcome.usage}"
    if len(outcome.text) > TEXT_BOUND:
        return f"text of {len(outcome.text)} characters"
    if len(outcome.stop_reason) > 100:
        return f"stop reason of {len(outcome.stop_reason)} characters"
    for item in outcome.reasoning:
        if len(item.encrypted_content) > TEXT_BOUND or any(len(text) > TEXT_BOUND for text in item.summary):
            return "reasoning is not capped"
        if len(item.id) > 300:
            return "a reasoning item's id is not capped"
    for call in outcome.tool_calls:
        if len(call.raw_arguments) > ARGUMENTS_BOUND:
            return f"raw arguments of {len(call.raw_arguments)} characters"
        if len(call.name) > 300 or len(call.id) > 300:
            return "a call's name or id is not capped"
    return None


@pytest.fixture(scope="module")
def wire() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


async def _no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def _model(fmt: str, server: WireServer) -> Model:
    options: dict[str, Any] = {"api_key": "k", "timeout": 5.0, "max_retries": 0, "sleep": _no_sleep}
    if fmt == "openai":
        return OpenAIModel("openai:m", "m", base_url=server.openai_url, **options)
    if fmt == "responses":
        return OpenAIResponsesModel("openai:m", "m", base_url=server.openai_url, **options)
    return AnthropicModel("anthropic:m", "m", base_url=server.url, **options)


REQUEST = ModelRequest(system="s", messages=(UserMessage(text="go"),), max_output_tokens=10)


async def _run(model: Model, server: WireServer, replies: list[Reply]) -> list[str]:
    found: list[str] = []
    for number, reply in enumerate(replies):
        server.push(reply)
        outcome: ModelResponse | BaseException
        try:
            outcome = await model.complete(REQUEST)
        except Exception as exc:  # the point of the fuzz: anything but a ModelError is reported
            outcome = exc
        why = problem(outcome)
        if why is not None:
            found.append(f"case {number}: {why}; reply {str(reply)[:300]}")
        if server.pending:
            found.append(f"case {number}: the reply was not read")
            break
    return found


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("block", range(BLOCKS))
def test_hostile_replies(wire: WireServer, fmt: str, block: int) -> None:
    rng = random.Random(f"{SEED}-{fmt}-{block}")
    replies = [hostile(fmt, rng) for _ in range(CASES)]
    found = asyncio.run(_run(_model(fmt, wire), wire, replies))
    assert not found, f"{len(found)} of {CASES} replies broke the boundary:\n" + "\n".join(found[:8])
