"""The agent's seams to the log: what an earlier process of the attempt did is read back, the rest done and logged.

    ReplayingModel.complete ─► answered before? ─► the logged answer
                            └► else ─► (hold) ─► live model ─► answer journaled durably ─► returned, charged
    ReplayingTools.execute  ─► run before?      ─► the logged outcome
                            └► else ─► tool_call logged ─► live tool ─► checkpoint ─► tool_result logged
    LoggedOnce              ─► the prompt, the notes given before a call, a compaction, the stop: logged once
                               per attempt, the notes read back on a replay
    ReplayTurns             ─► the agents of one event loop replay one at a time, each to its first live call

All three read one index of the attempt's past (`AttemptRecord`, one pass over the log). None of them knows the
loop that drives it: whatever asks a model and runs tools (the built-in agent, a remote worker) can be
journaled through them, and a resumed driver asks exactly what the first one asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from plait.agent._replay import AttemptRecord, replayed
from plait.agent.journal import ModelCallJournal, valid_text
from plait.agent.toolset import ToolOutcome, Toolset
from plait.events.runlog import RunLog
from plait.events.store import redaction
from plait.events.types import AgentStopped, ContextCompacted, NotesDelivered, PromptGiven, ToolCalled, ToolReturned
from plait.messages import Model, ModelRequest, ModelResponse, ToolCall, ToolSpec, Usage
from plait.redact import Redactor, scrub_strings, strings_in

__all__ = [
    "Arriving",
    "Checkpoint",
    "Hold",
    "LoggedOnce",
    "NoteSource",
    "ReplayingModel",
    "ReplayTurns",
    "ReplayingTools",
]

Checkpoint = Callable[[], Awaitable[str | None]]
"""Saves the worktree when its files changed; returns the checkpoint commit, or None when nothing changed."""

NoteSource = Callable[[], Sequence[str]]
"""Returns notes (from other agents, the planner, the merge queue) new since the last call."""

Hold = Callable[[], Awaitable[str | None]]
"""Awaited before each live model call: waits while the user has paused the agent; returns why, when the user
stopped it."""

Charge = Callable[[Usage, float], None]
"""Told what a live model call cost (a call read back from the log was charged when it was paid)."""

_CHANGES_FILES = frozenset({"edit_file", "write_file", "run", "claim"})  # a claim may merge integrated work in


class Arriving(Protocol):
    """Where a model call's text goes as it streams in: each piece, then `clear` once the call has ended."""

    def __call__(self, piece: str) -> None: ...

    def clear(self) -> None: ...


class ReplayingModel:
    """A live model behind the journal: a call answered in an earlier process is read back, never paid again.

    Answers come back as the log keeps them: a secret in a live reply (a tool argument, its text) is redacted,
    as the log redacts it, so that it is neither used nor sent again.
    """

    def __init__(
        self,
        live: Model,
        journal: ModelCallJournal,
        *,
        redact: Callable[[str], str],
        hold: Hold | None = None,
        charge: Charge | None = None,
        arriving: Arriving | None = None,
    ) -> None:
        self.live, self.journal = live, journal
        self._redact = redact
        self.hold, self.charge = hold, charge
        self.arriving = arriving
        """Told the reply's text as it streams in (for a live view), cleared once the call is logged."""

    @property
    def replays_next(self) -> bool:
        """Whether the next call was answered in an earlier process (it will be read back)."""
        return self.journal.answered(self.journal.calls + 1)

    async def held(self) -> str | None:
        """Wait, before a live call, while the user has paused the agent; returns why when the user stopped it.

        A call read back from the log never waits.
        """
        if self.hold is None or self.replays_next:
            return None
        return await self.hold()

    async def complete(self, request: ModelRequest) -> tuple[ModelResponse, float]:
        """The answer to the next call and its cost: read back, or asked live and on disk before it returns."""
        try:
            response, cost = await self.journal.complete(self.live, request, on_text=self.arriving)
        finally:
            if self.arriving is not None:
                self.arriving.clear()
        if self.charge is not None and not self.journal.last_replayed:
            self.charge(response.usage, cost)
        data = response.model_dump(mode="json")
        if isinstance(self._redact, Redactor) and self._redact.finds_nothing(strings_in(data)):
            return response, cost  # one pass over all its text says so: most replies hold no secret
        clean = scrub_strings(data, self._redact)
        return (response if clean == data else ModelResponse.model_validate(clean)), cost


class ReplayingTools:
    """A live tool set behind the log: a call run in an earlier process returns its logged outcome.

    A new call is logged as started, run, checkpointed when it may change files, and its outcome logged; one in
    flight at a crash runs again but is not logged as started twice. Outcomes come back as the log keeps them:
    output redacted, `is_error` set for a malformed call too.
    """

    def __init__(
        self,
        live: Toolset,
        past: AttemptRecord,
        log: RunLog,
        *,
        agent: str,
        attempt: int,
        checkpoint: Checkpoint | None = None,
    ) -> None:
        self.live, self._past, self._log = live, past, log
        self._ids = {"run_id": log.run_id, "agent": agent}
        self._attempt = attempt
        self._redact = redaction(log.store)
        self.checkpoint = checkpoint

    def specs(self) -> tuple[ToolSpec, ...]:
        return self.live.specs()

    def replays(self, call: ToolCall, *, step: int) -> bool:
        """Whether `execute(call, step=step)` will hand back a logged outcome instead of running the call."""
        return self._past.results.has((step, call.id))

    async def execute(self, call: ToolCall, *, step: int, instead: ToolOutcome | None = None) -> ToolOutcome:
        """The outcome of `call`, made at model call `step`; `instead` is logged as its outcome without running
        it (a call the reply was cut inside of)."""
        recorded = self._past.results.get((step, call.id))
        if recorded is not None:
            return replayed(recorded, call)
        at = {"step": step, "attempt": self._attempt}
        if (step, call.id) not in self._past.called:
            await self._log.append_async(ToolCalled(**self._ids, call=call, **at))
        started = time.monotonic()
        outcome = instead if instead is not None else await self.live.execute(call)
        failed = outcome.is_error or outcome.format_error
        outcome = dataclasses.replace(outcome, output=valid_text(self._redact(outcome.output)), is_error=failed)
        took = time.monotonic() - started
        saved = (await self.checkpoint() or "") if self.checkpoint and call.name in _CHANGES_FILES else ""
        await self._log.append_async(
            ToolReturned(
                **self._ids,
                call_id=call.id,
                name=call.name,
                output=outcome.output,
                is_error=failed,
                format_error=outcome.format_error,
                duration_s=took,
                checkpoint=saved,
                **at,
            )
        )
        return outcome


class LoggedOnce:
    """An agent's own events besides its calls, each logged once per attempt: its prompt, the notes it is given
    before a model call (read back on a replay), a compaction of its conversation, its stop."""

    def __init__(self, past: AttemptRecord, log: RunLog, model: ReplayingModel, *, agent: str, attempt: int) -> None:
        self._past, self._log, self._model = past, log, model
        self._ids = {"run_id": log.run_id, "agent": agent}
        self._attempt = attempt
        self._redact = redaction(log.store)

    async def prompt(self, event: PromptGiven) -> None:
        if not self._past.prompted:
            await self._log.append_async(event)
            self._past.prompted = True

    def notes(self, step: int, source: NoteSource | None) -> list[str]:
        """The notes given before model call `step`: as logged, or new ones (logged) before a live call."""
        if step in self._past.notes:
            return self._past.notes[step]
        if self._model.replays_next:
            return []  # this step's call was made, and logged, without notes: new ones wait for a live step
        notes = [self._redact(note) for note in source()] if source else []
        if notes:
            decision = f"delivered {len(notes)} note(s)"
            self._log.append(
                NotesDelivered(**self._ids, decision=decision, notes=notes, step=step, attempt=self._attempt)
            )
        return notes

    def compacted(self, step: int, event: ContextCompacted) -> None:
        """Log a compaction before model call `step`, unless it was logged before."""
        if step not in self._past.compactions:
            self._log.append(event)

    def stopped(self, event: AgentStopped) -> None:
        """Log why the attempt stopped, unless an earlier process did (a stop other than an interruption)."""
        if not self._past.stopped:
            self._log.append(event)


class ReplayTurns:
    """Agents replaying their past on one event loop take turns: one replays, to its first live call, while the
    others wait for theirs; it yields to the loop after every step read back.

    A replay is pure CPU. Without turns every agent replays at once, each step of each agent between two reads
    of an agent's live call, so that the first new request goes out only once every agent has replayed; with
    them it goes out as soon as the first agent has, while the next one replays.
    """

    def __init__(self) -> None:
        self._turn = asyncio.Lock()
        self._holder: object | None = None

    async def replay(self, agent: object) -> None:
        """Before a step read back: wait for `agent`'s turn (kept until it goes live), then let the loop run."""
        if self._holder is not agent:
            await self._turn.acquire()
            self._holder = agent
        await asyncio.sleep(0)

    def live(self, agent: object) -> None:
        """`agent` is past its replay (it is about to call its model or run a tool), or stopped: its turn ends."""
        if self._holder is agent:
            self._holder = None
            self._turn.release()
