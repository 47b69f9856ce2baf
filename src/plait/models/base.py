"""The neutral conversation every provider translates to and from, and the `Model` protocol."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AssistantMessage",
    "Message",
    "MessageChain",
    "Model",
    "RetryHook",
    "SYSTEM_BREAK",
    "ModelRequest",
    "ModelResponse",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolSpec(_Frozen):
    """A tool offered to the model: its name, what it does, and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


class ToolCall(_Frozen):
    """A tool call as the model sent it.

    `arguments` is None when `raw_arguments` was not a JSON object; the agent turns
    that into an error observation instead of failing.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""

    @classmethod
    def parse(cls, id: str, name: str, raw: str | dict[str, Any] | None) -> ToolCall:
        """Build a call from a provider's raw arguments, keeping malformed JSON for the error message."""
        if isinstance(raw, dict):
            return cls(id=id, name=name, arguments=raw, raw_arguments=json.dumps(raw))
        text = raw or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return cls(id=id, name=name, arguments=None, raw_arguments=text)
        return cls(id=id, name=name, arguments=value if isinstance(value, dict) else None, raw_arguments=text)


class UserMessage(_Frozen):
    kind: Literal["user"] = "user"
    text: str


class AssistantMessage(_Frozen):
    kind: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class ToolResultMessage(_Frozen):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    content: str
    is_error: bool = False


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="kind")]


class Usage(_Frozen):
    """Tokens of one call. `cached_tokens` are the part of `input_tokens` read from the prompt cache;
    `cache_write_tokens` the part written to it (Anthropic bills those higher)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    def __sub__(self, other: Usage) -> Usage:
        """What was spent between two running totals."""
        return Usage(
            input_tokens=self.input_tokens - other.input_tokens,
            output_tokens=self.output_tokens - other.output_tokens,
            cached_tokens=self.cached_tokens - other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens - other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


SYSTEM_BREAK = "\f"
"""Separates the parts of a system prompt, the part shared with other agents first (see `ModelRequest.system`)."""


class ModelRequest(_Frozen):
    """Everything sent in one call. `system` comes first so the shared prefix can be cached."""

    system: str
    """The system prompt. `SYSTEM_BREAK` may end a part that other agents' prompts start with word for word:
    a provider that caches up to explicit marks marks it, so they read it from the cache; it is sent as nothing."""
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_output_tokens: int = 8192
    tool_choice: str | None = None
    """The name of a tool the model must call; None lets it choose (or answer in text)."""

    def fingerprint(self, chain: MessageChain | None = None) -> str:
        """A stable hash of the request: the journal uses it to spot a replay that diverged.

        The messages are hashed as a chain, one link per message; with a `MessageChain` that saw
        the earlier messages of this conversation, only the new ones are hashed.
        """
        head = {
            "system": self.system,
            "tools": [t.model_dump(mode="json") for t in self.tools],
            "max_output_tokens": self.max_output_tokens,
        }
        if self.tool_choice is not None:  # only when set, so that earlier logs still match
            head["tool_choice"] = self.tool_choice
        blob = json.dumps(head, sort_keys=True, separators=(",", ":"))
        link = (chain or MessageChain()).digest(self.messages)
        return hashlib.sha256(blob.encode() + link.encode()).hexdigest()


class MessageChain:
    """Hashes a growing conversation in time proportional to what is new since the last call."""

    def __init__(self) -> None:
        self._count = 0
        self._first: object = None
        self._last: object = None
        self._digest = hashlib.sha256(b"plait-messages").hexdigest()

    def digest(self, messages: tuple[Message, ...]) -> str:
        same = 0 < self._count <= len(messages) and messages[0] is self._first
        if not (same and messages[self._count - 1] is self._last):
            self._count, self._last = 0, None
            self._digest = hashlib.sha256(b"plait-messages").hexdigest()
        for message in messages[self._count :]:
            blob = message.model_dump_json()
            self._digest = hashlib.sha256(self._digest.encode() + blob.encode()).hexdigest()
        self._count = len(messages)
        self._first, self._last = (messages[0], messages[-1]) if messages else (None, None)
        return self._digest


class ModelResponse(_Frozen):
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    stop_reason: str = ""

    def as_message(self) -> AssistantMessage:
        return AssistantMessage(text=self.text, tool_calls=self.tool_calls)


RetryHook = Callable[[int, float, str], None]
"""Called before a retry with (attempt number, seconds to wait, reason), so the wait can be logged."""


@runtime_checkable
class Model(Protocol):
    """A language model that answers a request, asynchronously."""

    @property
    def name(self) -> str:
        """The full model name, such as `openai:gpt-5.1`; the price table is keyed by it."""
        ...

    async def complete(self, request: ModelRequest, *, on_retry: RetryHook | None = None) -> ModelResponse:
        """Answer one request, retrying what is transient. Raises `plait.errors.ModelError` for good failures."""
        ...
