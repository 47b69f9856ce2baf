"""The tool loop of one agent: query the model, run the tools it asks for, append what they return.

    run ─► step ─► (limits, notes, compaction) ─► model.complete ─► tools.execute each call ─► step ...

The model and the tools are the replaying ones (`_replaying`): every step is in the event log before the
next one starts, and a resumed agent reads back what an earlier process did instead of doing it again. The
loop ends when the model calls `finish`, or a limit stops it; either way an `agent_stopped` event says why.

Whatever enters the conversation (the task, the model's replies, tool output, notes) is first redacted
the way the log redacts it: the model never sees a secret, and a resumed agent, which reads its past
from the log, asks exactly what the first one asked.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, Field

from plait.agent._replay import AttemptRecord
from plait.agent._replaying import (
    Arriving,
    Checkpoint,
    Hold,
    LoggedOnce,
    NoteSource,
    ReplayingModel,
    ReplayingTools,
    ReplayTurns,
)
from plait.agent.budget import BudgetExceeded
from plait.agent.context import NOTES_HEADER, Compactor, ContextBudget
from plait.agent.journal import ModelCallJournal, valid_text
from plait.agent.prompts import REFUSED, cut_reply, cut_text, task_prompt, too_many_calls
from plait.agent.toolset import ToolOutcome, Toolset
from plait.errors import ModelError
from plait.events.runlog import RunLog
from plait.events.store import redaction
from plait.events.types import AgentStopped, ContextCompacted, PromptGiven, StopReason
from plait.messages import (
    AssistantMessage,
    Message,
    Model,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from plait.models.pricing import PriceTable

if TYPE_CHECKING:
    from plait.settings import Settings

__all__ = ["Agent", "AgentLimits", "AgentResult", "Arriving", "Checkpoint", "Hold", "NoteSource"]

_NO_TOOL = "Your reply called no tool. Call a tool to continue, or call finish with a summary when you are done."
_MAX_REFUSALS = 2
"""Refusals in a row that stop the agent: asked again, the model declined again."""


class Spending(Protocol):
    """A budget the agent is charged to; `check` raises `BudgetExceeded` when it is spent."""

    def check(self) -> None: ...

    def charge(self, usage: Usage, usd: float) -> None: ...


class AgentLimits(BaseModel):
    max_steps: int = Field(60, ge=1)
    max_tokens: int = Field(3_000_000, ge=1)
    max_format_errors: int = Field(3, ge=1)
    max_output_tokens: int = Field(8192, ge=1)
    max_tool_calls: int = Field(64, ge=1)
    """Tool calls of one reply that are run; the conversation keeps those, and the model is told of the rest."""

    @classmethod
    def from_settings(cls, s: Settings, *, most_steps: int | None = None) -> AgentLimits:
        """The limits the settings give every agent; `most_steps` caps the model calls further (an expert's answer)."""
        steps = s.max_steps if most_steps is None else min(s.max_steps, most_steps)
        return cls(
            max_steps=steps,
            max_tokens=s.max_tokens,
            max_format_errors=s.max_format_errors,
            max_output_tokens=s.max_output_tokens,
        )


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
        log: RunLog,
        agent_id: str,
        model: Model,
        toolbox: Toolset,
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
        turns: ReplayTurns | None = None,
    ) -> None:
        self.log, self.agent_id = log, agent_id
        self.turns = turns
        """Shared with the other agents of the loop: they replay their past one at a time (see `ReplayTurns`)."""
        self._ids = {"run_id": log.run_id, "agent": agent_id}
        self._redact = redaction(log.store)
        self.system = self._redact(system)
        self.limits = limits or AgentLimits()
        self.notes = notes
        self.budget = budget
        self.attempt = attempt
        self.compactor = Compactor(context) if context is not None else None
        """Summarises older steps when a request nears the model's context budget; None keeps every message."""
        past = AttemptRecord(log, agent_id, attempt)
        self.journal = ModelCallJournal(log, agent_id, prices, attempt, answered=past.answers)
        charge = budget.charge if budget is not None else None
        self._model = ReplayingModel(
            model, self.journal, redact=self._redact, hold=hold, charge=charge, arriving=arriving
        )
        self._tools = ReplayingTools(toolbox, past, log, agent=agent_id, attempt=attempt, checkpoint=checkpoint)
        self._once = LoggedOnce(past, log, self._model, agent=agent_id, attempt=attempt)
        self.messages: list[Message] = []
        self.usage = Usage()
        self.cost = 0.0
        self.steps = 0
        self._turn_start = 0
        self._turn_tokens = 0
        """Where the current turn started: the step and token limits count per turn of a lasting conversation."""
        self._format_errors = 0
        self._refusals = 0
        self._replayed_specs: tuple[ToolSpec, ...] | None = None

    @property
    def model(self) -> Model:
        return self._model.live

    @property
    def toolbox(self) -> Toolset:
        return self._tools.live

    @toolbox.setter
    def toolbox(self, tools: Toolset) -> None:
        self._tools.live = tools
        self._replayed_specs = None

    async def run(self, task: str) -> AgentResult:
        """Work on `task` until the model finishes or a limit stops it."""
        task = self._redact(task)
        await self._prompt(task)
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
        await self._prompt(text)
        self.messages.append(UserMessage(text=text))
        self._turn_start, self._turn_tokens = self.steps, self.usage.total_tokens
        self._format_errors = self._refusals = 0
        try:
            return await self._until_finished()
        except _Stop as stop:
            return AgentResult(stop.reason, stop.summary, self.steps, self.usage, self.cost)

    async def _prompt(self, text: str) -> None:
        names = [t.name for t in self._tools.specs()]
        given = PromptGiven(**self._ids, system=self.system, user=text, tools=names, attempt=self.attempt)
        await self._once.prompt(given)

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
        finally:
            self._live()

    def _live(self) -> None:
        if self.turns is not None:
            self.turns.live(self)

    async def step(self) -> None:
        """One model call and the tool calls it asks for."""
        if self.turns is not None and self._model.replays_next:
            await self.turns.replay(self)
        else:
            self._live()
        if (stopped := await self._model.held()) is not None:
            raise _Stop("stopped_by_user", stopped)
        self._check_limits()
        self._take_notes()
        self._compact()
        # every part is valid already: validating the whole conversation at every step made a replay quadratic
        request = ModelRequest.model_construct(
            system=self.system,
            messages=tuple(self.messages),
            tools=self._specs(),
            max_output_tokens=self.limits.max_output_tokens,
        )
        try:
            response, cost = await self._model.complete(request)
        except ModelError as exc:
            raise _Stop("model_error", str(exc)) from exc
        self.steps += 1
        if self.compactor is not None:
            self.compactor.measured(request.messages, response.usage.input_tokens)
        self.usage, self.cost = self.usage + response.usage, self.cost + cost
        if response.stop_reason == "refusal":
            self._refused(response.text)
            return
        self._refusals = 0
        message, calls = response.as_message(), response.tool_calls
        if len(calls) > self.limits.max_tool_calls:  # a hostile or runaway reply: its first calls only
            calls = calls[: self.limits.max_tool_calls]
            message = message.model_copy(update={"tool_calls": calls})
        self.messages.append(message)
        cut = response.stop_reason == "length"
        if not calls:
            self.messages.append(UserMessage(text=cut_text(self.limits.max_output_tokens) if cut else _NO_TOOL))
            self._count_format_error(True)
            return
        for call in calls:
            outcome = await self._execute(call, cut=cut)
            if outcome.finished:
                raise _Stop("finished", outcome.summary)
        if len(calls) < len(response.tool_calls):
            self.messages.append(UserMessage(text=too_many_calls(len(response.tool_calls), len(calls))))
            self._count_format_error(True)

    def _specs(self) -> tuple[ToolSpec, ...]:
        """The tools offered at this step; a replay asks the tool set once, not at every step it reads back."""
        if not self._model.replays_next:
            self._replayed_specs = None
            return self._tools.specs()
        if self._replayed_specs is None:
            self._replayed_specs = self._tools.specs()
        return self._replayed_specs

    def _refused(self, text: str) -> None:
        """The model declined: its words stay in the conversation; asked again, declining again stops it."""
        self._refusals += 1
        said = text.strip() or "(it gave no reason)"
        self.messages.append(AssistantMessage(text=said))
        if self._refusals >= _MAX_REFUSALS:
            raise _Stop("model_refused", f"the model refused {self._refusals} times in a row: {' '.join(said.split())}")
        self.messages.append(UserMessage(text=REFUSED))

    async def _execute(self, call: ToolCall, *, cut: bool = False) -> ToolOutcome:
        instead = None
        if cut and call.arguments is None:  # the reply ended inside this call's arguments
            instead = ToolOutcome(cut_reply(self.limits.max_output_tokens), format_error=True)
        if not self._tools.replays(call, step=self.steps):
            self._live()
        outcome = await self._tools.execute(call, step=self.steps, instead=instead)
        self.messages.append(
            ToolResultMessage(call_id=call.id, name=call.name, content=outcome.output, is_error=outcome.is_error)
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
        if notes := self._once.notes(self.steps + 1, self.notes):
            self.messages.append(UserMessage(text=f"{NOTES_HEADER}:\n\n" + "\n\n".join(notes)))

    def _compact(self) -> None:
        """Summarise older steps when the next request nears the context budget; logged once per step."""
        if self.compactor is None or (done := self.compactor.compact(self.messages, self.steps)) is None:
            return
        self.messages = done.messages
        budget, step = self.compactor.budget, self.steps + 1
        why = f"the request neared {budget.limit} of the model's {budget.tokens} context tokens"
        counts = {"step": step, "attempt": self.attempt, "budget": budget.tokens, **done.data()}
        self._once.compacted(step, ContextCompacted(**self._ids, decision=done.decision, reason=why, **counts))

    def _stopped(self, reason: StopReason, summary: str) -> AgentResult:
        summary = valid_text(summary)
        result = AgentResult(reason, summary, self.steps, self.usage, self.cost)
        stopped = AgentStopped(
            **self._ids, reason=reason, summary=summary, steps=self.steps, usage=self.usage, cost_usd=self.cost
        )
        self._once.stopped(stopped)
        return result
