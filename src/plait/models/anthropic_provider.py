"""Anthropic Messages API with tool use, marked for prompt caching.

Anthropic caches only up to explicit breakpoints, at most four a request, and bills a cache write at 1.25×
the input price and a read at 0.1×. The marks:

    tools ........ [last tool]         shared by every agent with the same tools (a parallel run's workers)
    system ....... [system]            this agent's system prompt; or, when it has parts (SYSTEM_BREAK):
                   [shared part] [own part]   the first shared by the agents whose prompts start with it,
                                              instead of the tools' mark, which it covers
    messages ..... [the previous call's last block] ... [this call's last block]

The last block writes the whole conversation so far for the next call; the previous call's last block
is where that call wrote, read back even when this turn added more than the 20 blocks Anthropic looks
back over from a breakpoint (a turn of many tool calls). A conversation only grows between calls, so
every call reads what the one before wrote.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import anthropic
from anthropic.types import MessageParam, TextBlockParam, ToolUnionParam

from plait.errors import BadApiKey, ModelError, UnknownModel
from plait.messages import (
    STOP_LENGTH,
    STOP_REFUSAL,
    SYSTEM_BREAK,
    AssistantMessage,
    BadReplyBody,
    ModelRequest,
    ModelResponse,
    RetryHook,
    TextHook,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from plait.models._provider import ProviderBase
from plait.models._reply import MAX_STOP, cap_text, count, field, reply_error, string, usage
from plait.models._retry import RETRY_BUDGET, Sleep, Transient, status_transient
from plait.models._stream import AnthropicStream

__all__ = ["AnthropicModel"]


def _blocks(message: UserMessage | AssistantMessage | ToolResultMessage) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        return "user", [{"type": "text", "text": message.text}] if message.text else []
    if isinstance(message, ToolResultMessage):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.call_id, "content": message.content}
        if message.is_error:
            block["is_error"] = True
        return "user", [block]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    for call in message.tool_calls:
        # A malformed call is sent with empty input: the API accepts only an object.
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments or {}})
    return "assistant", blocks


def _cache(block: dict[str, Any]) -> None:
    block["cache_control"] = {"type": "ephemeral"}


def _mark_conversation(turns: list[dict[str, Any]]) -> None:
    """Breakpoints on the last block, and on the last block before the last assistant turn (the previous call's)."""
    if not turns:
        return
    _cache(turns[-1]["content"][-1])
    last_assistant = max((i for i, t in enumerate(turns) if t["role"] == "assistant"), default=-1)
    if last_assistant > 0:
        _cache(turns[last_assistant - 1]["content"][-1])


def to_messages(request: ModelRequest) -> list[MessageParam]:
    """The neutral conversation as alternating user and assistant turns, consecutive tool results sharing one,
    with the conversation's cache breakpoints."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    _mark_conversation(out)
    return cast(list[MessageParam], out)


def to_system(request: ModelRequest) -> list[TextBlockParam]:
    """The system prompt as text blocks, one a part (at most two), each a cache breakpoint."""
    shared, _, own = request.system.partition(SYSTEM_BREAK)
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": text} for text in (shared, own.replace(SYSTEM_BREAK, "")) if text
    ]
    for block in blocks:
        _cache(block)
    return cast(list[TextBlockParam], blocks)


def to_tools(request: ModelRequest) -> list[ToolUnionParam]:
    """The tools; the last a cache breakpoint unless the system prompt's two parts take it (they cover it)."""
    tools: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
    ]
    if tools and len(to_system(request)) < 2:
        _cache(tools[-1])
    return cast(list[ToolUnionParam], tools)


_STOPS = {"max_tokens": STOP_LENGTH, "model_context_window_exceeded": STOP_LENGTH, "refusal": STOP_REFUSAL}
"""Anthropic's stop reasons that every provider names alike."""


def from_message(message: dict[str, Any], name: str) -> ModelResponse:
    """An Anthropic reply (JSON read by `read_json`) as a neutral response; `input_tokens` counts cached ones too.

    Raises:
        BadReplyBody: The body has no list of content blocks: an error in a 200, or not a message at all.
    """
    content = message.get("content")
    if not isinstance(content, list):
        raise reply_error(message, "content")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, block in enumerate(content):
        kind = field(block, "type")
        if kind == "text" and isinstance(text := field(block, "text"), str):
            texts.append(text)
        elif kind == "tool_use":
            call_id = string(field(block, "id")) or f"toolu_{i + 1}"
            calls.append(ToolCall.parse(call_id, string(field(block, "name")), field(block, "input")))
    u = message.get("usage")
    read, written = count(field(u, "cache_read_input_tokens")), count(field(u, "cache_creation_input_tokens"))
    stop = string(message.get("stop_reason"), MAX_STOP)
    return ModelResponse(
        text=cap_text("".join(texts)),
        tool_calls=tuple(calls),
        usage=usage(count(field(u, "input_tokens")) + read + written, field(u, "output_tokens"), read, written),
        model=name,
        stop_reason=_STOPS.get(stop, stop),
    )


def _server_message(exc: anthropic.APIStatusError) -> str:
    text = exc.api_message or exc.response.text or exc.message
    return " ".join(text.split())[:500]


class AnthropicModel(ProviderBase):
    """A Claude model behind the Anthropic Messages API."""

    def __init__(
        self,
        name: str,
        model_id: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 600.0,
        max_retries: int = 6,
        retry_budget: float = RETRY_BUDGET,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        super().__init__(
            name,
            model_id,
            api_key=api_key,
            base_url=base_url or "https://api.anthropic.com",
            timeout=timeout,
            max_retries=max_retries,
            retry_budget=retry_budget,
            sleep=sleep,
        )

    def _client(self) -> anthropic.AsyncAnthropic:
        """A client for one call, so no connection outlives the event loop that opened it."""
        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self._timeouts(),
            max_retries=0,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=self._tls()),
        )

    def _classify(self, exc: Exception) -> Transient | None:
        if isinstance(exc, BadReplyBody):
            return Transient(f"unreadable reply body: {exc}")
        if isinstance(exc, anthropic.APIStatusError):
            return status_transient(exc.status_code, exc.response.headers, _server_message(exc))
        if isinstance(exc, anthropic.APITimeoutError):
            return Transient(f"no reply from {self.base_url} within {self._timeout:g}s")
        if isinstance(exc, anthropic.APIConnectionError):
            return Transient(f"cannot connect to {self.base_url}")
        return None

    def _error(self, exc: anthropic.APIError) -> ModelError:
        if not isinstance(exc, anthropic.APIStatusError):
            return ModelError(f"{self._name} failed: {' '.join(exc.message.split())}")
        status, message = exc.status_code, _server_message(exc)
        if status == 401:
            return BadApiKey("anthropic rejected the API key (401): check ANTHROPIC_API_KEY")
        if status == 404:
            return UnknownModel(f"anthropic at {self.base_url} does not know model '{self.model_id}': {message}")
        return ModelError(f"{self._name} rejected the request ({status}): {message}")

    async def _once(self, request: ModelRequest, on_text: TextHook | None) -> ModelResponse:
        async with (
            self._client() as client,
            client.messages.with_streaming_response.create(
                model=self.model_id,
                max_tokens=request.max_output_tokens,
                system=to_system(request) or anthropic.omit,
                messages=to_messages(request),
                tools=to_tools(request) if request.tools else anthropic.omit,
                tool_choice={"type": "tool", "name": request.tool_choice} if request.tool_choice else anthropic.omit,
                stream=True,
            ) as raw,
        ):
            body = await self._body(raw, AnthropicStream(on_text), "message_stop")
        return from_message(body, self._name)

    async def complete(
        self, request: ModelRequest, *, on_retry: RetryHook | None = None, on_text: TextHook | None = None
    ) -> ModelResponse:
        try:
            return await self._retrying(lambda: self._once(request, on_text), on_retry)
        except anthropic.APIError as exc:
            raise self._error(exc) from exc
