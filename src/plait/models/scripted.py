"""Models that need no provider: `ScriptedModel` plays turns from a script, `FunctionModel` asks a function.

They ship in the package so that tests, the demo and users' own tests drive plait
without a network. A script is YAML (or JSON):

    turns:
      - text: "Let me look around."
        tool_calls:
          - {name: list_files, arguments: {pattern: "**/*.py"}}
      - expect: "def total("          # the last tool result must contain this
        tool_calls:
          - {name: finish, arguments: {summary: "Done."}}

`arguments` may be a string, sent as the raw JSON text (malformed on purpose, if need be).

For several agents sharing one model (a parallel run), a script holds conversations instead,
each picked by a regex searched in the request's system prompt and first user message:

    conversations:
      - match: "Your task:.*currency"
        turns: [...]

Within a conversation the turn is the number of assistant messages already in the request
(with those a context compaction summarised counted in),
so the same request always gets the same answer: a resumed agent replays its history and
picks up where it was, and parallel agents each follow their own script.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from plait.compaction_mark import summarised_steps
from plait.errors import ScriptError
from plait.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    RetryHook,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = ["Conversation", "FunctionModel", "ScriptTurn", "ScriptedModel", "estimate_usage"]


class _ScriptCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    arguments: dict[str, Any] | str = {}
    id: str | None = None


class ScriptTurn(BaseModel):
    """One scripted reply."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    tool_calls: list[_ScriptCall] = []
    expect: str | None = None
    """A substring the most recent tool result must contain, to catch a script that drifted."""
    usage: Usage | None = None
    """Reported usage; estimated from the text (4 characters a token) when absent."""
    delay: float = 0.0
    """Seconds to wait before answering, to make the timing of a demo realistic."""


class Conversation(BaseModel):
    """The turns of one agent, for requests whose system prompt or first message matches `match`."""

    model_config = ConfigDict(extra="forbid")
    match: str
    turns: list[ScriptTurn]
    name: str = ""


class _Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turns: list[ScriptTurn] = []
    conversations: list[Conversation] = []


def estimate_usage(request: ModelRequest, response: ModelResponse) -> Usage:
    """Tokens as ceil(characters / 4), over the whole request and the reply."""
    prompt = len(request.model_dump_json())
    completion = len(response.text) + sum(len(c.name) + len(c.raw_arguments) for c in response.tool_calls)
    return Usage(input_tokens=math.ceil(prompt / 4), output_tokens=math.ceil(completion / 4))


def _turn_of(request: ModelRequest) -> int:
    """The assistant messages of the conversation, counting those a compaction summarised away."""
    turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
    return turn + sum(summarised_steps(m.text) for m in request.messages if isinstance(m, UserMessage))


def _last_result(request: ModelRequest) -> str | None:
    for message in reversed(request.messages):
        if isinstance(message, ToolResultMessage):
            return message.content
    return None


class ScriptedModel:
    """Plays a script, records every request, and refuses a call beyond the script.

    With `turns`, calls are answered in order. With `conversations`, each request is answered
    by the conversation it matches, at the turn given by its count of assistant messages.
    """

    def __init__(
        self,
        turns: Sequence[ScriptTurn | dict[str, Any]] = (),
        name: str = "scripted:inline",
        *,
        conversations: Sequence[Conversation | dict[str, Any]] = (),
    ) -> None:
        try:
            self.turns = [t if isinstance(t, ScriptTurn) else ScriptTurn.model_validate(t) for t in turns]
            self.conversations = [
                c if isinstance(c, Conversation) else Conversation.model_validate(c) for c in conversations
            ]
            self._patterns = [re.compile(c.match, re.DOTALL) for c in self.conversations]
        except ValidationError as exc:
            raise ScriptError(f"invalid script turn: {exc.errors()[0]['msg']}") from exc
        except re.error as exc:
            raise ScriptError(f"invalid conversation pattern in the script: {exc}") from exc
        self._name = name
        self.calls: list[ModelRequest] = []
        self._played: dict[int, set[int]] = {}

    @classmethod
    def from_file(cls, path: Path | str) -> ScriptedModel:
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise ScriptError(f"cannot read script {path}: {exc}") from exc
        try:
            script = _Script.model_validate(data if isinstance(data, dict) else {"turns": data})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ScriptError(f"script {path} is invalid at {where}: {first['msg']}") from exc
        return cls(script.turns, name=f"scripted:{path}", conversations=script.conversations)

    @property
    def name(self) -> str:
        return self._name

    def _pick(self, request: ModelRequest) -> tuple[str, int, list[ScriptTurn], int]:
        """(label, conversation index or -1, its turns, turn index) for this request."""
        if not self.conversations:
            return "", -1, self.turns, len(self.calls) - 1
        first = next((m.text for m in request.messages if isinstance(m, UserMessage)), "")
        head = request.system + "\n" + first
        for i, pattern in enumerate(self._patterns):
            if pattern.search(head):
                turn = _turn_of(request)
                label = f" ({self.conversations[i].name or f'conversation {i + 1}'})"
                return label, i, self.conversations[i].turns, turn
        raise ScriptError(f"{self._name}: no conversation matches a request starting {first[:80]!r}")

    async def complete(self, request: ModelRequest, *, on_retry: RetryHook | None = None) -> ModelResponse:
        self.calls.append(request)
        label, conversation, turns, index = self._pick(request)
        if index >= len(turns):
            raise ScriptError(f"{self._name}{label} has {len(turns)} turns; call {index + 1} has none")
        self._played.setdefault(conversation, set()).add(index)
        turn = turns[index]
        if turn.expect is not None:
            last = _last_result(request) or ""
            if turn.expect not in last:
                raise ScriptError(
                    f"{self._name}{label} turn {index + 1} expected the last tool result to contain "
                    f"{turn.expect!r}, got {last[:120]!r}"
                )
        if turn.delay:
            await asyncio.sleep(turn.delay)
        calls = tuple(
            ToolCall.parse(c.id or f"call_{index + 1}_{i + 1}", c.name, c.arguments)
            for i, c in enumerate(turn.tool_calls)
        )
        response = ModelResponse(
            text=turn.text,
            tool_calls=calls,
            model=self._name,
            stop_reason="tool_use" if calls else "end_turn",
        )
        usage = turn.usage or estimate_usage(request, response)
        return response.model_copy(update={"usage": usage})

    def assert_complete(self) -> None:
        """Raise `ScriptError` if turns of the script were never played."""
        if not self.conversations:
            if len(self.calls) < len(self.turns):
                raise ScriptError(f"{self._name} played {len(self.calls)} of {len(self.turns)} turns")
            return
        for i, conversation in enumerate(self.conversations):
            played = len(self._played.get(i, set()))
            if played < len(conversation.turns):
                label = conversation.name or f"conversation {i + 1}"
                raise ScriptError(f"{self._name} ({label}) played {played} of {len(conversation.turns)} turns")


ModelFunction = Callable[[ModelRequest], ModelResponse | Awaitable[ModelResponse]]


class FunctionModel:
    """Answers each request with `fn(request)`, sync or async, for tests that react to the conversation."""

    def __init__(self, fn: ModelFunction, name: str = "function:model") -> None:
        self._fn = fn
        self._name = name
        self.calls: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self._name

    async def complete(self, request: ModelRequest, *, on_retry: RetryHook | None = None) -> ModelResponse:
        self.calls.append(request)
        result = self._fn(request)
        response = await result if inspect.isawaitable(result) else result
        if response.usage == Usage():
            response = response.model_copy(update={"usage": estimate_usage(request, response)})
        return response
