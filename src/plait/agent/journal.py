"""Record and replay of model calls: the call is logged before it is sent, its answer after.

The answer is appended in a worker thread: it is synced to disk (a durable kind) before the agent goes on, and
while it syncs the other agents keep running.

On a replay (a resumed agent) an answered call is read back from the log instead of being
paid for again; a request that no longer matches the logged one is reported, never mixed in.

Whatever a model answers can be logged: an unpaired surrogate in its text becomes U+FFFD, and a tool call
whose arguments hold one, nest deeper than `ARGUMENT_DEPTH` or hold what JSON cannot, keeps them only as
escaped JSON text (`arguments` None), which the tool reports to the model as a malformed call. A model that
raises anything but a `ModelError` is reported as one, so the agent stops with a reason, not a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plait.errors import ModelError, StateError
from plait.events.runlog import RunLog
from plait.events.store import EventStore
from plait.events.types import Event, ModelCallFailed, ModelCallFinished, ModelCallRetried, ModelCallStarted
from plait.messages import MessageChain, Model, ModelRequest, ModelResponse, TextHook, TextStreaming, ToolCall
from plait.models.pricing import PriceTable

__all__ = ["ARGUMENT_DEPTH", "REPLAYED", "ModelCallJournal", "agent_events", "loggable", "valid_text"]

ARGUMENT_DEPTH = 64
"""Levels of nesting a tool call's arguments may have: tools take flat arguments, and the log's encoder stops at a
few hundred levels. The providers' parsing of arguments stops at the same depth."""
_RAW_KEPT = 65_536
"""Characters of the raw arguments kept of a call whose arguments were set aside..."""
_STRING_KEPT = 4096
"""...and of each string in them (and the first unpaired surrogate, if the rest has one)."""
_UNPAIRED = re.compile("[\ud800-\udfff]")
_SCALARS = (str, int, float, bool, type(None))


REPLAYED = (
    "task_started",
    "prompt",
    "tool_call",
    "tool_result",
    "decision",
    "notes_delivered",
    "compacted",
    "agent_stopped",
    "model_response",
    "steer",
)
"""The kinds of an agent's events that a resumed agent is rebuilt from (see `agent_events`), and the user's
steering of it, which its live calls look at."""


@dataclass
class _Past:
    """What was read of one agent's past: its events of the `REPLAYED` kinds up to sequence number `last`."""

    events: list[Event] = field(default_factory=list)
    last: int = 0


@dataclass
class _Read:
    """What was read of one run: each agent's past as it was asked for."""

    agents: dict[str, _Past] = field(default_factory=dict)


_reads: weakref.WeakKeyDictionary[EventStore, dict[str, _Read]] = weakref.WeakKeyDictionary()
_reads_lock = threading.Lock()


def _run_read(log: RunLog) -> _Read:
    try:
        reads = _reads.setdefault(log.store, {})
    except TypeError:  # a store that cannot be weakly referred to is read in full each time
        reads = {}
    return reads.setdefault(log.run_id, _Read())


def agent_events(log: RunLog, agent: str) -> list[Event]:
    """The events of the `REPLAYED` kinds of one agent of a run, in order.

    A resumed agent's journal and replay both start from them, the run asks for them for each attempt's last
    checkpoint, and steering looks at them at each live call: each agent's past is read and decoded once (per
    store), later calls reading only what was appended since, so that the past of a long run is not decoded
    again by every reader of it, and the first agent to replay decodes its own past, not the whole run's.
    """
    with _reads_lock:
        run = _run_read(log)
        past = run.agents.get(agent)
        if past is None:
            fresh = log.events(agent=agent, kinds=REPLAYED)
            past = run.agents[agent] = _Past(fresh, fresh[-1].seq if fresh else 0)
        else:
            fresh = log.events(agent=agent, kinds=REPLAYED, after=past.last)
            if fresh and not fresh[0].seq > past.last:  # a store that does not number its events: all there is
                past.events = []
            past.events.extend(fresh)
            past.last = fresh[-1].seq if fresh else past.last
        return list(past.events)


class ModelCallJournal:
    """The model calls of one agent, numbered from 1 in the order the agent makes them."""

    def __init__(
        self,
        log: RunLog,
        agent: str,
        prices: PriceTable,
        attempt: int = 1,
        *,
        answered: Mapping[int, ModelCallFinished] | None = None,
    ) -> None:
        """`answered` holds the attempt's answered calls by number, when the caller read the log already."""
        self._log = log
        self._agent = agent
        self._prices = prices
        self._attempt = attempt
        if answered is None:
            events = agent_events(log, agent)
            answered = {e.call: e for e in events if isinstance(e, ModelCallFinished) and e.attempt == attempt}
        self._recorded = dict(answered)
        self.calls = 0
        self._chain = MessageChain()
        self.replayed = 0
        self.last_replayed = False
        """Whether the latest call was read back from the log (it was paid, and charged, before)."""

    def answered(self, call: int) -> bool:
        """Whether model call `call` of this attempt was answered in an earlier process (it is read back)."""
        return call in self._recorded

    async def complete(
        self, model: Model, request: ModelRequest, *, on_text: TextHook | None = None
    ) -> tuple[ModelResponse, float]:
        """Answer the agent's next call, from the log when it was answered before; returns (response, cost).

        `on_text` is told the reply's text as it streams in, from a model that streams: for a live view only,
        it is not logged.
        """
        self.calls += 1
        call, digest = self.calls, request.fingerprint(self._chain)
        recorded = self._recorded.get(call)
        if recorded is not None:
            if recorded.req_hash != digest:
                raise StateError(
                    f"agent {self._agent} of run {self._log.run_id} asks something else at model call {call} than "
                    "the log recorded (the code or the prompt changed): start a new run instead of resuming"
                )
            self.replayed += 1
            self.last_replayed = True
            return recorded.response, recorded.cost_usd
        self.last_replayed = False
        base = {"run_id": self._log.run_id, "agent": self._agent, "call": call, "attempt": self._attempt}
        sent = ModelCallStarted(**base, req_hash=digest, model=model.name, messages=len(request.messages))
        await self._log.append_async(sent)  # the event loop goes on: every agent waits for an append made on it

        def on_retry(attempt: int, wait: float, reason: str) -> None:
            self._log.append(
                ModelCallRetried(
                    run_id=self._log.run_id, agent=self._agent, call=call, attempt=attempt, wait_s=wait, reason=reason
                )
            )

        started = time.monotonic()
        try:
            if on_text is not None and isinstance(model, TextStreaming):
                answer = await model.complete(request, on_retry=on_retry, on_text=on_text)
            else:
                answer = await model.complete(request, on_retry=on_retry)
            response = loggable(answer)
        except ModelError as exc:
            self._log.append(ModelCallFailed(**base, error=valid_text(str(exc))))
            raise
        except Exception as exc:  # a Model is any object: what it raises is not known here
            error = valid_text(" ".join(f"{type(exc).__name__}: {exc}".split()))[:2000]
            self._log.append(ModelCallFailed(**base, error=error))
            raise ModelError(f"the model {model.name} failed at call {call}: {error}") from exc
        cost = self._prices.cost(model.name, response.usage)
        answered = ModelCallFinished(
            **base, req_hash=digest, response=response, cost_usd=cost, duration_s=time.monotonic() - started
        )
        await self._append_durably(answered)
        return response, cost

    async def _append_durably(self, event: ModelCallFinished) -> None:
        """Append an answer in a worker thread: its sync to disk holds up this agent only, never the event loop.

        The agent goes on (runs the answer's tool calls) only once the answer is on disk. Cancelled meanwhile, it
        still waits for the append, so that nothing it logs next (that it was stopped) comes before the answer.
        """
        appending = asyncio.get_running_loop().run_in_executor(None, self._log.append, event)
        try:
            await asyncio.shield(appending)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await appending
            raise


def valid_text(text: str) -> str:
    """`text` with every unpaired surrogate (which UTF-8 cannot encode) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _writable(arguments: dict[str, Any]) -> bool:
    """Whether arguments are JSON the log can hold: shallow enough, valid strings, nothing but JSON values."""
    stack: list[tuple[Any, int]] = [(arguments, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list | tuple):
            if depth > ARGUMENT_DEPTH:
                return False
            if isinstance(node, dict):
                if not all(isinstance(k, str) and valid_text(k) is k for k in node):
                    return False
                stack.extend((v, depth + 1) for v in node.values())
            else:
                stack.extend((v, depth + 1) for v in node)
        elif not isinstance(node, _SCALARS) or (isinstance(node, str) and valid_text(node) is not node):
            return False
    return True


def _pruned(node: Any, depth: int = 1) -> Any:
    """`node` cut below `ARGUMENT_DEPTH` + 1 levels, with anything JSON cannot hold replaced by its type's name."""
    if isinstance(node, dict | list | tuple) and depth > ARGUMENT_DEPTH + 1:
        return "..."
    if isinstance(node, dict):
        return {str(k): _pruned(v, depth + 1) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_pruned(v, depth + 1) for v in node]
    if isinstance(node, str) and len(node) > _STRING_KEPT:
        unpaired = _UNPAIRED.search(node, _STRING_KEPT)
        return node[:_STRING_KEPT] + "..." + (unpaired.group() if unpaired else "")
    return node if isinstance(node, _SCALARS) else f"<{type(node).__name__}>"


def _loggable_call(call: ToolCall) -> ToolCall:
    name, call_id, raw = valid_text(call.name), valid_text(call.id), valid_text(call.raw_arguments)
    arguments = call.arguments
    if arguments is not None and not (isinstance(arguments, dict) and _writable(arguments)):
        raw, arguments = json.dumps(_pruned(arguments), ensure_ascii=True)[:_RAW_KEPT], None
    if name is call.name and call_id is call.id and raw is call.raw_arguments and arguments is call.arguments:
        return call  # compared by identity: arguments nested deep enough would exhaust the stack of ==
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw)


def loggable(response: ModelResponse) -> ModelResponse:
    """The reply with nothing in it that the log cannot write (see the module's docstring)."""
    calls = tuple(_loggable_call(c) for c in response.tool_calls)
    text, model, stop = valid_text(response.text), valid_text(response.model), valid_text(response.stop_reason)
    same = all(a is b for a, b in zip(calls, response.tool_calls, strict=True))
    if same and text is response.text and model is response.model and stop is response.stop_reason:
        return response
    return response.model_copy(update={"text": text, "tool_calls": calls, "model": model, "stop_reason": stop})
