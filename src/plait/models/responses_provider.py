"""OpenAI's Responses API, the one OpenAI recommends for its newest models (`openai:` on OpenAI's own endpoint).

A conversation goes as input items: user and assistant `message`s, `function_call`s and their
`function_call_output`s, with the system prompt as `instructions`. Nothing is stored at OpenAI (`store: false`):
every call sends the whole conversation, as with the other APIs. A reasoning model's reasoning comes back as
`reasoning` items, their content encrypted (`include: reasoning.encrypted_content`); they are kept in the
assistant turn (`AssistantMessage.reasoning`, so in the log too) and sent back before it on every later call,
as the API asks, so the model keeps its train of thought across tool calls. Prompt caching is OpenAI's, as for
Chat Completions (`prompt_cache_key`), and reported as `input_tokens_details.cached_tokens`.
"""

from __future__ import annotations

import json
from typing import Any, cast

import openai
from openai.types.responses import ResponseInputParam, ToolParam

from plait.messages import (
    STOP_LENGTH,
    STOP_REFUSAL,
    SYSTEM_BREAK,
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    Reasoning,
    TextHook,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from plait.models._reply import MAX_STOP, MAX_TEXT, cap_text, field, reply_error, string, usage
from plait.models._stream import ResponsesStream
from plait.models.openai_provider import OpenAIModel

__all__ = ["OpenAIResponsesModel", "from_response", "to_input"]


def _assistant(message: AssistantMessage) -> list[dict[str, Any]]:
    # Item ids are left out: with `store: false` the API keeps no item an id could name.
    items: list[dict[str, Any]] = [
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": text} for text in r.summary],
            "encrypted_content": r.encrypted_content,
        }
        for r in message.reasoning
    ]
    if message.text:
        items.append({"type": "message", "role": "assistant", "content": message.text})
    for call in message.tool_calls:
        arguments = call.raw_arguments or json.dumps(call.arguments or {})
        items.append({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments})
    return items


def to_input(request: ModelRequest) -> list[dict[str, Any]]:
    """The neutral conversation as Responses input items."""
    items: list[dict[str, Any]] = []
    for message in request.messages:
        if isinstance(message, UserMessage):
            items.append({"type": "message", "role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant(message))
        elif isinstance(message, ToolResultMessage):
            items.append({"type": "function_call_output", "call_id": message.call_id, "output": message.content})
    return items


def to_tools(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": False}
        for t in request.tools
    ]


def _reasoning(item: Any) -> Reasoning:
    summary = field(item, "summary")
    parts = summary if isinstance(summary, list) else ()
    return Reasoning(
        id=string(field(item, "id")),
        encrypted_content=string(field(item, "encrypted_content"), MAX_TEXT),
        summary=tuple(cap_text(text) for part in parts if isinstance(text := field(part, "text"), str)),
    )


def _stop(response: dict[str, Any], refused: bool) -> str:
    if refused:
        return STOP_REFUSAL
    reason = string(field(response, "incomplete_details", "reason"), MAX_STOP)
    if reason == "max_output_tokens":
        return STOP_LENGTH
    return reason or string(response.get("status"), MAX_STOP)


def from_response(response: dict[str, Any], name: str) -> ModelResponse:
    """A Responses API response (JSON read by `read_json`) as a neutral response.

    Raises:
        BadReplyBody: The body has no list of output items: an error in a 200, or not a response at all.
    """
    output = response.get("output")
    if not isinstance(output, list):
        raise reply_error(response, "output")
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[Reasoning] = []
    for i, item in enumerate(output):
        kind = field(item, "type")
        if kind == "message":
            content = field(item, "content")
            for part in content if isinstance(content, list) else ():
                if field(part, "type") == "output_text" and isinstance(text := field(part, "text"), str):
                    texts.append(text)
                elif field(part, "type") == "refusal" and isinstance(text := field(part, "refusal"), str):
                    refusals.append(text)
        elif kind == "function_call":
            call_id = string(field(item, "call_id")) or string(field(item, "id")) or f"call_{i + 1}"
            calls.append(ToolCall.parse(call_id, string(field(item, "name")), field(item, "arguments")))
        elif kind == "reasoning":
            reasoning.append(_reasoning(item))
    u = response.get("usage")
    details = field(u, "input_tokens_details")
    return ModelResponse(
        text=cap_text("".join(texts) or "".join(refusals)),
        tool_calls=tuple(calls),
        usage=usage(
            field(u, "input_tokens"),
            field(u, "output_tokens"),
            field(details, "cached_tokens"),
            field(details, "cache_write_tokens"),
        ),
        model=name,
        stop_reason=_stop(response, bool(refusals)),
        reasoning=tuple(reasoning),
    )


class OpenAIResponsesModel(OpenAIModel):
    """A model behind the OpenAI Responses API; errors and retries as for Chat Completions."""

    async def _once(self, request: ModelRequest, on_text: TextHook | None) -> ModelResponse:
        system = request.system.replace(SYSTEM_BREAK, "")
        async with (
            self._client() as client,
            client.responses.with_streaming_response.create(
                model=self.model_id,
                instructions=system or openai.omit,
                input=cast(ResponseInputParam, to_input(request)),
                tools=cast(list[ToolParam], to_tools(request)) if request.tools else openai.omit,
                tool_choice={"type": "function", "name": request.tool_choice} if request.tool_choice else openai.omit,
                max_output_tokens=request.max_output_tokens,
                store=False,
                include=["reasoning.encrypted_content"],
                prompt_cache_key=self.cache_key if self.provider == "openai" else openai.omit,
                stream=True,
            ) as raw,
        ):
            body = await self._body(raw, ResponsesStream(on_text), "response.completed")
        return from_response(body, self._name)
