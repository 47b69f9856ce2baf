"""The wire server's third format and its streams: a reply body as the OpenAI Responses API returns it, and any
format's complete body as the server-sent events a call with `stream: true` gets instead.

    responses_body(reply, model, number)   a neutral reply as a Responses API response object
    chat_events(body) / anthropic_events(body) / responses_events(body)
                                           the events (name, data) that stream a complete body
    sse(name, data)                        one event as the bytes on the wire
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["EVENTS", "anthropic_events", "chat_events", "responses_body", "responses_events", "sse"]

Events = Iterator[tuple[str, dict[str, Any]]]


def sse(name: str, data: dict[str, Any] | str) -> bytes:
    """One server-sent event; an empty `name` sends data alone, as Chat Completions does."""
    text = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {name}\n" if name else "").encode() + f"data: {text}\n\n".encode()


def responses_body(reply: Mapping[str, Any], model: str, number: int) -> dict[str, Any]:
    """A Responses API response for a neutral reply; `reasoning` items (dicts) come first, as the API puts them."""
    output: list[dict[str, Any]] = [
        {"type": "reasoning", "id": f"rs_{number}_{i}", "summary": [], **item}
        for i, item in enumerate(reply.get("reasoning", []))
    ]
    if reply.get("text"):
        part = {"type": "output_text", "text": reply["text"], "annotations": []}
        output.append({"type": "message", "id": f"msg_{number}", "role": "assistant", "status": "completed",
                       "content": [part]})  # fmt: skip
    for i, call in enumerate(reply.get("tool_calls", [])):
        args = call.get("arguments", {})
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{number}_{i + 1}",
                "call_id": call.get("id") or f"call_{number}_{i + 1}",
                "name": call["name"],
                "arguments": args if isinstance(args, str) else json.dumps(args),
                "status": "completed",
            }
        )
    usage = reply.get("usage") or {}
    inp, out = int(usage.get("input_tokens", 10)), int(usage.get("output_tokens", 5))
    stop = reply.get("stop_reason")
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 1_700_000_000 + number,
        "model": model,
        "status": "incomplete" if stop == "length" else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if stop == "length" else None,
        "output": output,
        "usage": {
            "input_tokens": inp,
            "input_tokens_details": {
                "cached_tokens": int(usage.get("cached_tokens", 0)),
                "cache_write_tokens": int(usage.get("cache_write_tokens", 0)),
            },
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + out,
        },
    }


def _halves(text: str) -> list[str]:
    """`text` in two pieces (one when it is short), so that a stream has more than one delta."""
    cut = len(text) // 2
    return [text[:cut], text[cut:]] if cut else [text]


def chat_events(body: dict[str, Any]) -> Events:
    """A complete Chat Completions body as its chunks: text, then each tool call's name and arguments, then usage."""
    choice = body["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"],
                "model": body["model"], "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip

    yield "", chunk({"role": "assistant", "content": ""})
    for piece in _halves(message.get("content") or ""):
        yield "", chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls", [])):
        head = {"index": index, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}
        yield "", chunk({"tool_calls": [head]})
        for piece in _halves(call["function"]["arguments"]):
            yield "", chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield "", chunk({}, choice["finish_reason"])
    yield "", {**chunk({}), "choices": [], "usage": body["usage"]}


def anthropic_events(body: dict[str, Any]) -> Events:
    """A complete Messages body as its events, usage in `message_start` and again in `message_delta`."""
    yield "message_start", {"type": "message_start", "message": {**body, "content": [], "stop_reason": None}}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            start = {**block, "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _halves(block["text"])]
        else:
            start = {**block, "input": {}}
            text = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in _halves(text)]
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": delta, "usage": body["usage"]}
    yield "message_stop", {"type": "message_stop"}


def _item_events(index: int, item: dict[str, Any]) -> Events:
    base = {"output_index": index, "item_id": item.get("id", "")}
    if item["type"] == "message":
        yield "response.output_item.added", {"output_index": index, "item": {**item, "content": []}}
        text = item["content"][0]["text"]
        for piece in _halves(text):
            yield "response.output_text.delta", {**base, "content_index": 0, "delta": piece}
        yield "response.output_text.done", {**base, "content_index": 0, "text": text}
    elif item["type"] == "function_call":
        yield "response.output_item.added", {"output_index": index, "item": {**item, "arguments": ""}}
        for piece in _halves(item["arguments"]):
            yield "response.function_call_arguments.delta", {**base, "delta": piece}
        yield "response.function_call_arguments.done", {**base, "arguments": item["arguments"]}
    else:
        yield "response.output_item.added", {"output_index": index, "item": item}
    yield "response.output_item.done", {"output_index": index, "item": item}


def responses_events(body: dict[str, Any]) -> Events:
    """A complete Responses body as its events, each with its `type` and `sequence_number`."""

    def events() -> Events:
        start = {**body, "status": "in_progress", "output": [], "usage": None}
        yield "response.created", {"response": start}
        yield "response.in_progress", {"response": start}
        for index, item in enumerate(body["output"]):
            yield from _item_events(index, item)
        yield f"response.{body['status']}", {"response": body}

    for number, (name, data) in enumerate(events()):
        yield name, {"type": name, "sequence_number": number, **data}


EVENTS = {"openai": chat_events, "anthropic": anthropic_events, "responses": responses_events}
"""The events of a complete body, by format."""
