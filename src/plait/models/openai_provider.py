"""OpenAI Chat Completions, for OpenAI itself and for OpenAI-compatible servers (Ollama, vLLM, LM Studio...).

OpenAI caches prompts by prefix on its own (from 1,024 tokens, in steps of 128) and reports the part read
from the cache as `prompt_tokens_details.cached_tokens`. A request is routed by its first tokens and its
`prompt_cache_key`: every request of one model object (one run: its planner, workers and experts, whose
prompts start with the same tools) carries the same key, so they meet the prefixes they share, while other
runs sharing those first tokens go elsewhere instead of overflowing one cache.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any, cast

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolUnionParam

from plait.errors import BadApiKey, ModelError, UnknownModel
from plait.models._provider import ProviderBase
from plait.models._retry import Sleep, Transient, status_transient
from plait.models.base import (
    SYSTEM_BREAK,
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    RetryHook,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

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


def to_messages(request: ModelRequest) -> list[ChatCompletionMessageParam]:
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
    return cast(list[ChatCompletionMessageParam], out)


def to_tools(request: ModelRequest) -> list[ChatCompletionToolUnionParam]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in request.tools
    ]


def from_completion(completion: ChatCompletion, name: str) -> ModelResponse:
    """The first choice of a completion as a neutral response."""
    if not completion.choices:
        raise ModelError(f"{name} returned no choices")
    choice = completion.choices[0]
    calls = tuple(
        ToolCall.parse(call.id, call.function.name, call.function.arguments)
        for call in choice.message.tool_calls or ()
        if call.type == "function"
    )
    usage = Usage()
    if completion.usage is not None:
        details = completion.usage.prompt_tokens_details
        usage = Usage(
            input_tokens=completion.usage.prompt_tokens,
            output_tokens=completion.usage.completion_tokens,
            cached_tokens=(details.cached_tokens or 0) if details else 0,
            cache_write_tokens=(details.cache_write_tokens or 0) if details else 0,
        )
    return ModelResponse(
        text=choice.message.content or "",
        tool_calls=calls,
        usage=usage,
        model=name,
        stop_reason=choice.finish_reason or "",
    )


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    text = str(message) if message else (exc.response.text or exc.message)
    return " ".join(text.split())[:500]


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
            sleep=sleep,
        )
        self.provider = provider
        self.cache_key = f"plait-{secrets.token_hex(8)}"
        """Sent as `prompt_cache_key` to OpenAI proper (other servers may refuse an unknown field)."""

    def _client(self) -> openai.AsyncOpenAI:
        """A client for one call, so no connection outlives the event loop that opened it."""
        return openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self._timeout,
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(verify=self._tls()),
        )

    def _classify(self, exc: Exception) -> Transient | None:
        if isinstance(exc, openai.APIStatusError):
            if exc.code == "insufficient_quota":  # a 429 that waiting cannot cure
                return None
            return status_transient(exc.status_code, exc.response.headers, _server_message(exc))
        if isinstance(exc, openai.APITimeoutError):
            return Transient(f"no reply from {self.base_url} within {self._timeout:g}s")
        if isinstance(exc, openai.APIConnectionError):
            return Transient(f"cannot connect to {self.base_url}")
        return None

    def _error(self, exc: openai.APIError) -> ModelError:
        if not isinstance(exc, openai.APIStatusError):
            return ModelError(f"{self._name} failed: {' '.join(exc.message.split())}")
        status, message = exc.status_code, _server_message(exc)
        if status == 401:
            return BadApiKey(f"{self.provider} rejected the API key (401): check OPENAI_API_KEY")
        if status == 404 or exc.code == "model_not_found":
            return UnknownModel(f"{self.provider} at {self.base_url} does not know model '{self.model_id}': {message}")
        return ModelError(f"{self._name} rejected the request ({status}): {message}")

    async def _once(self, request: ModelRequest) -> ChatCompletion:
        # Many local servers know only the older `max_tokens`.
        openai_proper = self.provider == "openai"
        async with self._client() as client:
            return await client.chat.completions.create(
                model=self.model_id,
                messages=to_messages(request),
                tools=to_tools(request) if request.tools else openai.omit,
                tool_choice={"type": "function", "function": {"name": request.tool_choice}}
                if request.tool_choice
                else openai.omit,
                max_completion_tokens=request.max_output_tokens if openai_proper else openai.omit,
                max_tokens=openai.omit if openai_proper else request.max_output_tokens,
                prompt_cache_key=self.cache_key if openai_proper else openai.omit,
            )

    async def complete(self, request: ModelRequest, *, on_retry: RetryHook | None = None) -> ModelResponse:
        try:
            completion = await self._retrying(lambda: self._once(request), on_retry)
        except openai.APIError as exc:
            raise self._error(exc) from exc
        return from_completion(completion, self._name)
