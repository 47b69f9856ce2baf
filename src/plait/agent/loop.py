"""The tool loop of one agent: query the model, run the tools it asks for, record every step.

    run ─► step ─► (limits) ─► journal.complete ─► execute each tool call ─► record ─► step ...

Every step is appended to the event log before the next one starts. The loop ends when the
model calls `finish`, or a limit stops it; either way an `agent_stopped` event says why.

Whatever enters the conversation (the task, the model's replies, tool output, notes) is first redacted
the way the log redacts it: the model never sees a secret, and a resumed agent, which reads its past
from the log, asks exactly what the first one asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, Field

from plait.agent._replay import Recorded, replayed
from plait.agent.budget import BudgetExceeded
from plait.agent.context import NOTES_HEADER, Compactor, ContextBudget
from plait.agent.prompts import REFUSED, cut_reply, cut_text, task_prompt
from plait.agent.tools import ToolOutcome
from plait.errors import ModelError
from plait.events.journal import Journal, valid_text
from plait.events.store import EventStore, redaction
from plait.events.types import AgentStopped, Decision, Event, PromptGiven, StopReason, ToolCalled, ToolReturned
from plait.models.base import (
    AssistantMessage,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from plait.models.pricing import PriceTable
from plait.redact import scrub_strings

__all__ = ["Agent", "AgentLimits", "AgentResult", "Hold", "NoteSource", "ToolSet"]

Checkpoint = Callable[[], Awaitable[str | None]]
"""Saves the worktree when its files changed; returns the checkpoint commit, or None when nothing changed."""

_CHANGES_FILES = frozenset({"edit_file", "write_file", "run", "claim"})  # a claim may merge integrated work in

NoteSource = Callable[[], Sequence[str]]
"""Returns notes (from other agents, the planner, the merge queue) new since the last call."""

Hold = Callable[[], Awaitable[str | None]]
"""Awaited before each live model call: waits while the user has paused the agent; returns why, when the user
stopped it."""

_NO_TOOL = "Your reply called no tool. Call a tool to continue, or call finish with a summary when you are done."
_MAX_REFUSALS = 2
"""Refusals in a row that stop the agent: asked again, the model declined again."""


class Spending(Protocol):
    """A budget the agent is charged to; `check` raises `BudgetExceeded` when it is spent."""

    def check(self) -> None: ...

    def charge(self, usage: Usage, usd: float) -> None: ...


class ToolSet(Protocol):
    """What an agent can do: `Toolbox` is one; a planner adds its own tools around one."""

    def specs(self) -> tuple[ToolSpec, ...]: ...

    async def execute(self, call: ToolCall) -> ToolOutcome: ...


class AgentLimits(BaseModel):
    max_steps: int = Field(60, ge=1)
    max_tokens: int = Field(3_000_000, ge=1)
    max_format_errors: int = Field(3, ge=1)
    max_output_tokens: int = Field(8192, ge=1)


@dataclass(frozen=True)
class AgentResult:
    reason: StopReason
    """finished, step_limit, token_limit, format_errors, model_error, model_refused, interrupted or stopped_by_user."""
    summary: str
    steps: int
    usage: Usage
    cost_usd: float

    @property
    def ok(self) -> bool:
        return self.reason == "finished"


class Arriving(Protocol):
    """Where a model call's text goes as it streams in: each piece, then `clear` once the call has ended."""

    def __call__(self, piece: str) -> None: ...

    def clear(self) -> None: ...


class _Stop(Exception):
    """Ends the loop; carries why."""

    def __init__(self, reason: StopReason, summary: str) -> None:
        super().__init__(summary)
        self.reason, self.summary = reason, summary


class Agent:
    """One coding agent bound to a model, a toolbox (its worktree) and the event log."""

    def __init__(
        self,
        *,
        run_id: str,
        agent_id: str,
        model: Model,
        toolbox: ToolSet,
        store: EventStore,
        prices: PriceTable,
        system: str,
        limits: AgentLimits | None = None,
        notes: NoteSource | None = None,
        budget: Spending | None = None,
        attempt: int = 1,
        checkpoint: Checkpoint | None = None,
        context: ContextBudget | None = None,
        hold: Hold | None = None,
        arriving: Arriving | None = None,
    ) -> None:
        self.run_id, self.agent_id = run_id, agent_id
        self._ids = {"run_id": run_id, "agent": agent_id}
        self.model, self.toolbox, self.store = model, toolbox, store
        self._redact = redaction(store)
        self.system = self._redact(system)
        self.limits = limits or AgentLimits()
        self.notes = notes
        self.budget = budget
        self.attempt = attempt
        self.checkpoint = checkpoint
        self.hold = hold
        self.arriving = arriving
        """Told the reply's text as it streams in (for a live view), cleared once the call is logged."""
        self.compactor = Compactor(context) if context is not None else None
        """Summarises older steps when a request nears the model's context budget; None keeps every message."""
        self._log = Recorded(store, run_id, agent_id, attempt)
        self.journal = Journal(store, run_id, agent_id, prices, attempt, answered=self._log.answers)
        self.messages: list[Message] = []
        self.usage = Usage()
        self.cost = 0.0
        self.steps = 0
        self._turn_start = 0
        self._turn_tokens = 0
        """Where the current turn started: the step and token limits count per turn of a lasting conversation."""
        self._format_errors = 0
        self._refusals = 0

    async def run(self, task: str) -> AgentResult:
        """Work on `task` until the model finishes or a limit stops it."""
        task = self._redact(task)
        self._prompt(task)
        self.messages = [UserMessage(text=task_prompt(task))]
        try:
            result = await self._until_finished()
        except _Stop as stop:
            return self._stopped(stop.reason, stop.summary)
        return self._stopped(result.reason, result.summary)

    async def turn(self, text: str) -> AgentResult:
        """One turn of a conversation that lasts (an expert's question, a session user's message).

        `text` joins everything the agent was told and did in its earlier turns; the turn ends when
        the model calls a finishing tool (`finish`, `answer`) or a limit of the turn stops it. The step
        and token limits count per turn (budgets still count everything). No `agent_stopped` is logged:
        the agent lives on, and its owner logs what the turn produced.
        """
        text = self._redact(text)
        self._prompt(text)
        self.messages.append(UserMessage(text=text))
        self._turn_start, self._turn_tokens = self.steps, self.usage.total_tokens
        self._format_errors = self._refusals = 0
        try:
            return await self._until_finished()
        except _Stop as stop:
            return AgentResult(stop.reason, stop.summary, self.steps, self.usage, self.cost)

    def _prompt(self, text: str) -> None:
        if not self._log.prompted:
            names = [t.name for t in self.toolbox.specs()]
            self._record(PromptGiven(**self._ids, system=self.system, user=text, tools=names, attempt=self.attempt))
            self._log.prompted = True

    async def _until_finished(self) -> AgentResult:
        try:
            while True:
                await self.step()
        except _Stop as stop:
            if stop.reason != "finished":
                raise
            return AgentResult("finished", stop.summary, self.steps, self.usage, self.cost)
        except asyncio.CancelledError:
            self._stopped("interrupted", "stopped by the user")
            raise

    async def step(self) -> None:
        """One model call and the tool calls it asks for."""
        if self.hold is not None and not self.journal.answered(self.journal.calls + 1):  # a replayed call never waits
            stopped = await self.hold()
            if stopped is not None:
                raise _Stop("stopped_by_user", stopped)
        self._check_limits()
        self._take_notes()
        self._compact()
        request = ModelRequest(
            system=self.system,
            messages=tuple(self.messages),
            tools=self.toolbox.specs(),
            max_output_tokens=self.limits.max_output_tokens,
        )
        try:
            response, cost = await self.journal.complete(self.model, request, on_text=self.arriving)
        except ModelError as exc:
            raise _Stop("model_error", str(exc)) from exc
        finally:
            if self.arriving is not None:
                self.arriving.clear()
        response = self._redacted(response)
        self.steps += 1
        if self.compactor is not None:
            self.compactor.measured(request.messages, response.usage.input_tokens)
        self.usage, self.cost = self.usage + response.usage, self.cost + cost
        if self.budget is not None and not self.journal.last_replayed:
            self.budget.charge(response.usage, cost)  # a call read back from the log was charged when it was paid
        if response.stop_reason == "refusal":
            self._refused(response.text)
            return
        self._refusals = 0
        self.messages.append(response.as_message())
        cut = response.stop_reason == "length"
        if not response.tool_calls:
            self.messages.append(UserMessage(text=cut_text(self.limits.max_output_tokens) if cut else _NO_TOOL))
            self._count_format_error(True)
            return
        for call in response.tool_calls:
            outcome = await self._execute(call, cut=cut)
            if outcome.finished:
                raise _Stop("finished", outcome.summary)

    def _refused(self, text: str) -> None:
        """The model declined: its words stay in the conversation; asked again, declining again stops it."""
        self._refusals += 1
        said = text.strip() or "(it gave no reason)"
        self.messages.append(AssistantMessage(text=said))
        if self._refusals >= _MAX_REFUSALS:
            raise _Stop("model_refused", f"the model refused {self._refusals} times in a row: {' '.join(said.split())}")
        self.messages.append(UserMessage(text=REFUSED))

    async def _execute(self, call: ToolCall, *, cut: bool = False) -> ToolOutcome:
        recorded = self._log.results.get((self.steps, call.id))
        if recorded is not None:
            outcome = replayed(recorded, call)
            failed = recorded.is_error
        else:
            at = {"step": self.steps, "attempt": self.attempt}
            if (self.steps, call.id) not in self._log.called:
                self._record(ToolCalled(**self._ids, call=call, **at))
            started = time.monotonic()
            if cut and call.arguments is None:  # the reply ended inside this call's arguments
                outcome = ToolOutcome(cut_reply(self.limits.max_output_tokens), format_error=True)
            else:
                outcome = await self.toolbox.execute(call)
            outcome = dataclasses.replace(outcome, output=valid_text(self._redact(outcome.output)))
            failed = outcome.is_error or outcome.format_error
            took = time.monotonic() - started
            saved = (await self.checkpoint() or "") if self.checkpoint and call.name in _CHANGES_FILES else ""
            self._record(
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
        self.messages.append(
            ToolResultMessage(call_id=call.id, name=call.name, content=outcome.output, is_error=failed)
        )
        self._count_format_error(outcome.format_error)
        return outcome

    def _count_format_error(self, malformed: bool) -> None:
        self._format_errors = self._format_errors + 1 if malformed else 0
        if self._format_errors >= self.limits.max_format_errors:
            raise _Stop("format_errors", f"{self._format_errors} malformed replies in a row from the model")

    def _check_limits(self) -> None:
        if self.steps - self._turn_start >= self.limits.max_steps:
            raise _Stop("step_limit", f"reached the limit of {self.limits.max_steps} model calls")
        spent = self.usage.total_tokens - self._turn_tokens
        if spent >= self.limits.max_tokens:
            raise _Stop("token_limit", f"spent {spent} tokens of {self.limits.max_tokens} allowed")
        if self.budget is not None:
            try:
                self.budget.check()
            except BudgetExceeded as exc:
                raise _Stop("budget", str(exc)) from exc

    def _take_notes(self) -> None:
        key = self.steps + 1
        if key in self._log.notes:
            notes = self._log.notes[key]
        elif self.journal.answered(self.journal.calls + 1):
            notes = []  # this step's call was made, and logged, without notes: new ones wait for a live step
        else:
            notes = [self._redact(note) for note in self.notes()] if self.notes else []
            if notes:
                data = {"notes": notes, "step": key, "attempt": self.attempt}
                self._record(
                    Decision(**self._ids, topic="notes", decision=f"delivered {len(notes)} note(s)", data=data)
                )
        if notes:
            self.messages.append(UserMessage(text=f"{NOTES_HEADER}:\n\n" + "\n\n".join(notes)))

    def _compact(self) -> None:
        """Summarise older steps when the next request nears the context budget; logged once per step."""
        if self.compactor is None or (done := self.compactor.compact(self.messages, self.steps)) is None:
            return
        self.messages = done.messages
        key = self.steps + 1
        if key not in self._log.compactions:
            budget = self.compactor.budget
            data = {**done.data(), "step": key, "attempt": self.attempt, "budget": budget.tokens}
            why = f"the request neared {budget.limit} of the model's {budget.tokens} context tokens"
            self._record(Decision(**self._ids, topic="context", decision=done.decision, reason=why, data=data))

    def _stopped(self, reason: StopReason, summary: str) -> AgentResult:
        summary = valid_text(summary)
        result = AgentResult(reason, summary, self.steps, self.usage, self.cost)
        if self._log.stopped:
            return result
        self._record(
            AgentStopped(
                **self._ids, reason=reason, summary=summary, steps=self.steps, usage=self.usage, cost_usd=self.cost
            )
        )
        return result

    def _redacted(self, response: ModelResponse) -> ModelResponse:
        """The reply as the log keeps it: a secret in it (a tool argument, its text) is neither used nor logged."""
        data = response.model_dump(mode="json")
        clean = scrub_strings(data, self._redact)
        return response if clean == data else ModelResponse.model_validate(clean)

    def _record(self, event: Event) -> None:
        self.store.append(event)
