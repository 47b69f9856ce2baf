"""The neutral conversation every provider translates to and from, and the `Model` protocol.

The bottom of plait's layers: it imports nothing of plait but `errors`, so that the log, the providers and the
agent can all speak it without knowing one another.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from plait.errors import ModelError

__all__ = [
    "MAX_ARGUMENT_BYTES",
    "MAX_ARGUMENT_DEPTH",
    "STOP_LENGTH",
    "STOP_REFUSAL",
    "AssistantMessage",
    "BadReplyBody",
    "Message",
    "MessageChain",
    "Model",
    "RetryHook",
    "SYSTEM_BREAK",
    "ModelRequest",
    "ModelResponse",
    "Reasoning",
    "TextHook",
    "TextStreaming",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]


MAX_ARGUMENT_BYTES = 256 << 10
"""A tool call's raw arguments longer than this (in UTF-8) make a malformed call, explained in `raw_arguments`."""
MAX_ARGUMENT_DEPTH = 64
"""Arguments nested deeper than this make a malformed call too: tools take flat arguments."""
STOP_LENGTH = "length"
"""`ModelResponse.stop_reason` of a reply cut by the output token limit, whatever the provider called it."""
STOP_REFUSAL = "refusal"
"""`ModelResponse.stop_reason` of a reply in which the model refused; its text says why, when it said."""
_UNPAIRED = re.compile("[\ud800-\udfff]")
_HEAD = 120
"""Characters of oversized arguments quoted in the explanation that stands in for them."""


class BadReplyBody(ModelError):
    """A provider answered 200 with a body that cannot be read as its reply (not JSON, not an object...).

    Proxies and overloaded servers send such bodies now and then, so the providers retry them."""


def clean_text(text: str) -> str:
    """`text` with every unpaired surrogate (which UTF-8 cannot encode) replaced by U+FFFD."""
    return _UNPAIRED.sub("\ufffd", text) if _UNPAIRED.search(text) else text


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:40]} is out of range")
    return number


def strict_loads(text: str) -> Any:
    """`json.loads` refusing what JSON does not allow and Python does: NaN, Infinity, 1e999.

    Raises:
        ValueError: `text` is not JSON.
        RecursionError: `text` nests too deep for the parser.
    """
    return json.loads(text, parse_constant=_reject, parse_float=_finite)


def _too_deep(value: Any) -> bool:
    """Whether `value` nests deeper than `MAX_ARGUMENT_DEPTH`; walked without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_ARGUMENT_DEPTH:
                return True
            stack.extend((item, depth + 1) for item in (node.values() if isinstance(node, dict) else node))
    return False


def _clean_arguments(node: Any) -> Any:
    """Arguments (shallow: see `_too_deep`) with the unpaired surrogates of their strings replaced."""
    if isinstance(node, str):
        return clean_text(node)
    if isinstance(node, dict):
        return {clean_text(str(k)): _clean_arguments(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_clean_arguments(item) for item in node]
    return node


def _head(text: str) -> str:
    return clean_text(" ".join(text[: _HEAD * 2].split())[:_HEAD])


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
    def parse(cls, id: str, name: str, raw: object) -> ToolCall:
        """Build a call from a provider's raw arguments, keeping malformed JSON for the error message.

        Arguments over `MAX_ARGUMENT_BYTES` or `MAX_ARGUMENT_DEPTH`, or not a JSON object, make a malformed
        call (`arguments` None) whose `raw_arguments` say so; unpaired surrogates become U+FFFD.
        """
        id, name = clean_text(id), clean_text(name)
        if isinstance(raw, dict):
            if _too_deep(raw):
                return cls(id=id, name=name, arguments=None, raw_arguments=_deep_note(""))
            value: Any = _clean_arguments(raw)
            return cls._checked(id, name, value, json.dumps(value))
        if raw is not None and not isinstance(raw, str):
            what = f"a JSON {type(raw).__name__}" if isinstance(raw, list | int | float | bool) else "not JSON"
            return cls(id=id, name=name, arguments=None, raw_arguments=f"<the arguments were {what}, not an object>")
        text = raw or "{}"
        if problem := _size_note(text):
            return cls(id=id, name=name, arguments=None, raw_arguments=problem)
        try:
            value = strict_loads(text)
        except RecursionError:
            return cls(id=id, name=name, arguments=None, raw_arguments=_deep_note(text))
        except ValueError:  # JSONDecodeError, NaN, a number out of range
            return cls(id=id, name=name, arguments=None, raw_arguments=clean_text(text))
        if not isinstance(value, dict):
            return cls(id=id, name=name, arguments=None, raw_arguments=clean_text(text))
        if _too_deep(value):
            return cls(id=id, name=name, arguments=None, raw_arguments=_deep_note(text))
        return cls(id=id, name=name, arguments=_clean_arguments(value), raw_arguments=clean_text(text))

    @classmethod
    def _checked(cls, id: str, name: str, value: dict[str, Any], text: str) -> ToolCall:
        if problem := _size_note(text):
            return cls(id=id, name=name, arguments=None, raw_arguments=problem)
        return cls(id=id, name=name, arguments=value, raw_arguments=text)


def _size_note(text: str) -> str:
    """What stands in for arguments over `MAX_ARGUMENT_BYTES`; "" for arguments within it."""
    if len(text) * 4 <= MAX_ARGUMENT_BYTES:
        return ""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= MAX_ARGUMENT_BYTES:
        return ""
    return f"<the arguments were {size:,} bytes, over the cap of {MAX_ARGUMENT_BYTES:,}; they began: {_head(text)}>"


def _deep_note(text: str) -> str:
    began = f"; they began: {_head(text)}" if text else ""
    return f"<the arguments were nested deeper than {MAX_ARGUMENT_DEPTH} levels, the cap{began}>"


class UserMessage(_Frozen):
    kind: Literal["user"] = "user"
    text: str


class Reasoning(_Frozen):
    """A reasoning item of the OpenAI Responses API: sent back with its turn, so the model keeps its thread."""

    id: str
    encrypted_content: str = ""
    summary: tuple[str, ...] = ()


def _none(value: tuple[Reasoning, ...]) -> bool:
    return not value


_REASONING: Any = Field(default=(), exclude_if=_none)
"""Left out of the JSON when empty, so that messages and replies logged before it hash and read the same."""


class AssistantMessage(_Frozen):
    kind: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: tuple[Reasoning, ...] = _REASONING


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
        chain = chain or MessageChain()
        hashed = chain.head(self).copy()
        hashed.update(chain.digest(self.messages).encode())
        return hashed.hexdigest()

    def head_blob(self) -> bytes:
        """What the fingerprint hashes of the request besides its messages."""
        head = {
            "system": self.system,
            "tools": [t.model_dump(mode="json") for t in self.tools],
            "max_output_tokens": self.max_output_tokens,
        }
        if self.tool_choice is not None:  # only when set, so that earlier logs still match
            head["tool_choice"] = self.tool_choice
        return json.dumps(head, sort_keys=True, separators=(",", ":")).encode()


_FIRST_LINK = hashlib.sha256(b"plait-messages").hexdigest()
"""Where the chain of a conversation's messages starts."""


class MessageChain:
    """Hashes a growing conversation in time proportional to what is new since the last call.

    The rest of the request (system prompt, tools, limits) is the same from call to call of one agent: it is
    serialised and hashed again only when it changed (the hash of the head is kept, and each call's
    fingerprint goes on from a copy of it).
    """

    def __init__(self) -> None:
        self._count = 0
        self._first: object = None
        self._last: object = None
        self._digest = _FIRST_LINK
        self._head: tuple[str, tuple[ToolSpec, ...], int, str | None] | None = None
        self._head_hash = hashlib.sha256()

    def head(self, request: ModelRequest) -> hashlib._Hash:
        """The hash of `request.head_blob()`, made again only when the system prompt, tools or limits changed."""
        key = (request.system, request.tools, request.max_output_tokens, request.tool_choice)
        if self._head is None or not _same_head(self._head, key):
            self._head, self._head_hash = key, hashlib.sha256(request.head_blob())
        return self._head_hash

    def digest(self, messages: tuple[Message, ...]) -> str:
        same = 0 < self._count <= len(messages) and messages[0] is self._first
        if not (same and messages[self._count - 1] is self._last):
            self._count, self._last = 0, None
            self._digest = _FIRST_LINK
        for message in messages[self._count :]:
            blob = message.model_dump_json()
            self._digest = hashlib.sha256(self._digest.encode() + blob.encode()).hexdigest()
        self._count = len(messages)
        self._first, self._last = (messages[0], messages[-1]) if messages else (None, None)
        return self._digest


def _same_head(
    old: tuple[str, tuple[ToolSpec, ...], int, str | None], new: tuple[str, tuple[ToolSpec, ...], int, str | None]
) -> bool:
    """Whether two request heads are equal; tool specs an agent reuses are compared by identity first."""
    (system, tools, limit, choice), (system2, tools2, limit2, choice2) = old, new
    if system != system2 or limit != limit2 or choice != choice2 or len(tools) != len(tools2):
        return False
    return all(a is b or a == b for a, b in zip(tools, tools2, strict=True))


class ModelResponse(_Frozen):
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    stop_reason: str = ""
    """Why the model stopped, in the provider's words, except `STOP_LENGTH` and `STOP_REFUSAL`, which are
    the same for every provider."""
    reasoning: tuple[Reasoning, ...] = _REASONING

    def as_message(self) -> AssistantMessage:
        return AssistantMessage(text=self.text, tool_calls=self.tool_calls, reasoning=self.reasoning)


RetryHook = Callable[[int, float, str], None]
"""Called before a retry with (attempt number, seconds to wait, reason), so the wait can be logged."""
TextHook = Callable[[str], None]
"""Called with each piece of reply text as it streams in; after a retry (told to the `RetryHook`) the reply
starts again, and the pieces before are void."""


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


@runtime_checkable
class TextStreaming(Protocol):
    """A model that can tell its reply text as it arrives (the providers stream every call)."""

    streams_text: bool

    async def complete(
        self, request: ModelRequest, *, on_retry: RetryHook | None = None, on_text: TextHook | None = None
    ) -> ModelResponse:
        """`Model.complete`, telling `on_text` each piece of the reply's text as it arrives."""
        ...
