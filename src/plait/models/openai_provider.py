"""OpenAI Chat Completions, for OpenAI itself and for OpenAI-compatible servers (Ollama, vLLM, LM Studio...).

OpenAI caches prompts by prefix on its own (from 1,024 tokens, in steps of 128) and reports the part read
from the cache as `prompt_tokens_details.cached_tokens`. A request is routed by its first tokens and its
`prompt_cache_key`: every request of one model object (one run: its planner, workers and experts, whose
prompts start with the same tools) carries the same key, so they meet the prefixes they share, while other
runs sharing those first tokens go elsewhere instead of overflowing one cache.

The request is plain JSON posted without the SDK (`ProviderBase.post`): the reply is streamed and parsed here
anyway, and the SDK would cost a second to import and re-validate every message of a long conversation against
its types at every call. Its errors are still read for the Responses API, which is sent through it.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from typing import TYPE_CHECKING, Any

from plait.errors import BadApiKey, ModelError, UnknownModel
from plait.messages import (
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
from plait.models._provider import NoConnection, NoReply, ProviderBase, Rejected
from plait.models._reply import MAX_STOP, cap_text, field, reply_error, string, usage
from plait.models._retry import RETRY_BUDGET, Sleep, Transient, status_transient
from plait.models._stream import ChatStream

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIModel"]


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": message.text or (None if message.tool_calls else "")}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments or json.dumps(call.arguments or {})},
            }
            for call in message.tool_calls
        ]
    return out


def to_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The neutral conversation as Chat Completions messages, the system prompt first."""
    system = request.system.replace(SYSTEM_BREAK, "")
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in request.messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(message))
        elif isinstance(message, ToolResultMessage):
            out.append({"role": "tool", "tool_call_id": message.call_id, "content": message.content})
    return out


def to_tools(request: ModelRequest) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in request.tools
    ]


def _content(value: Any) -> str:
    """A message's content: a string, or (as some compatible servers send it) a list of text parts."""
    if isinstance(value, list):
        return "".join(text for part in value if isinstance(text := field(part, "text"), str))
    return value if isinstance(value, str) else ""


def _calls(message: Any) -> tuple[ToolCall, ...]:
    calls = field(message, "tool_calls")
    return tuple(
        ToolCall.parse(
            string(field(call, "id")) or f"call_{i + 1}",
            string(field(call, "function", "name")),
            field(call, "function", "arguments"),
        )
        for i, call in enumerate(calls if isinstance(calls, list) else ())
        if field(call, "type") in ("function", None) and isinstance(field(call, "function"), dict)
    )


def from_completion(completion: dict[str, Any], name: str) -> ModelResponse:
    """The first choice of a completion (JSON read by `read_json`) as a neutral response.

    Raises:
        BadReplyBody: The body has no list of choices: an error in a 200, or not a completion at all.
        ModelError: The list of choices is empty.
    """
    choices = completion.get("choices")
    if not isinstance(choices, list):
        raise reply_error(completion, "choices")
    if not choices:
        raise ModelError(f"{name} returned no choices")
    message = field(choices, 0, "message")
    text, refusal = _content(field(message, "content")), _content(field(message, "refusal"))
    stop = string(field(choices, 0, "finish_reason"), MAX_STOP)
    if refusal:
        text, stop = text or refusal, STOP_REFUSAL
    u = completion.get("usage")
    details = field(u, "prompt_tokens_details")
    return ModelResponse(
        text=cap_text(text),
        tool_calls=_calls(message),
        usage=usage(
            field(u, "prompt_tokens"),
            field(u, "completion_tokens"),
            field(details, "cached_tokens"),
            field(details, "cache_write_tokens"),
        ),
        model=name,
        stop_reason=stop,
    )


def _sdk_error(exc: Exception) -> Exception | None:
    """An error of the OpenAI SDK (raised on the Responses API) as the errors of `post`; None for any other."""
    sdk = sys.modules.get("openai")  # never imported here: an SDK error exists only once the SDK was
    if sdk is None or not isinstance(exc, sdk.APIError):
        return None
    if isinstance(exc, sdk.APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        text = str(message) if message else (exc.response.text or exc.message)
        return Rejected(exc.status_code, exc.response.headers, text, exc.code)
    if isinstance(exc, sdk.APITimeoutError):
        return NoReply()
    if isinstance(exc, sdk.APIConnectionError):
        return NoConnection()
    return ModelError(" ".join(exc.message.split()))


def _server_message(exc: Rejected) -> str:
    return " ".join(exc.message.split())[:500]


class OpenAIModel(ProviderBase):
    """A chat model behind the OpenAI Chat Completions API; `provider` is "openai" or "openai-compatible"."""

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
        provider: str = "openai",
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        super().__init__(
            name,
            model_id,
            api_key=api_key,
            base_url=base_url or "https://api.openai.com/v1",
            timeout=timeout,
            max_retries=max_retries,
            retry_budget=retry_budget,
            sleep=sleep,
        )
        self.provider = provider
        self.cache_key = f"plait-{secrets.token_hex(8)}"
        """Sent as `prompt_cache_key` to OpenAI proper (other servers may refuse an unknown field)."""

    def _client(self) -> openai.AsyncOpenAI:
        """An SDK client for one call, so no connection outlives the event loop that opened it."""
        import openai

        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self._timeouts(),
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(verify=self._tls()),
        )

    def _headers(self) -> dict[str, str]:
        """The key, and the organisation and project the environment names, as the SDK sends them."""
        headers = {"authorization": f"Bearer {self._api_key}"}
        for var, header in (("OPENAI_ORG_ID", "openai-organization"), ("OPENAI_PROJECT_ID", "openai-project")):
            if value := os.environ.get(var):
                headers[header] = value
        return headers

    def _classify(self, exc: Exception) -> Transient | None:
        if isinstance(exc, BadReplyBody):
            return Transient(f"unreadable reply body: {exc}")
        exc = _sdk_error(exc) or exc
        if isinstance(exc, Rejected):
            if exc.code == "insufficient_quota":  # a 429 that waiting cannot cure
                return None
            return status_transient(exc.status, exc.headers, _server_message(exc))
        if isinstance(exc, NoReply):
            return Transient(f"no reply from {self.base_url} within {self._timeout:g}s")
        if isinstance(exc, NoConnection):
            return Transient(f"cannot connect to {self.base_url}")
        return None

    def _error(self, exc: Rejected) -> ModelError:
        status, message = exc.status, _server_message(exc)
        if status == 401:
            return BadApiKey(f"{self.provider} rejected the API key (401): check OPENAI_API_KEY")
        if status == 404 or exc.code == "model_not_found":
            return UnknownModel(f"{self.provider} at {self.base_url} does not know model '{self.model_id}': {message}")
        return ModelError(f"{self._name} rejected the request ({status}): {message}")

    async def _once(self, request: ModelRequest, on_text: TextHook | None) -> ModelResponse:
        # Many local servers know only the older `max_tokens`.
        openai_proper = self.provider == "openai"
        body: dict[str, Any] = {"model": self.model_id, "messages": to_messages(request)}
        if request.tools:
            body["tools"] = to_tools(request)
        if request.tool_choice:
            body["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
        body["max_completion_tokens" if openai_proper else "max_tokens"] = request.max_output_tokens
        if openai_proper:
            body["prompt_cache_key"] = self.cache_key
        body.update(stream=True, stream_options={"include_usage": True})
        async with self.post("/chat/completions", body, self._headers()) as raw:
            reply = await self._body(raw, ChatStream(on_text), "[DONE]")
        return from_completion(reply, self._name)

    async def complete(
        self, request: ModelRequest, *, on_retry: RetryHook | None = None, on_text: TextHook | None = None
    ) -> ModelResponse:
        try:
            return await self._retrying(lambda: self._once(request, on_text), on_retry)
        except Exception as exc:
            error = exc if isinstance(exc, Rejected) else _sdk_error(exc)
            if isinstance(error, Rejected):
                raise self._error(error) from exc
            if isinstance(error, ModelError):
                raise ModelError(f"{self._name} failed: {error}") from exc
            raise
