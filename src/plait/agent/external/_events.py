"""An external agent's own events, as plait events: model turns, tool calls and results, usage and cost.

    assistant turn ──► `model_response` (its text, tool calls, usage, cost) ──► `tool_call` per tool use
    tool result    ──► `tool_result`
    session id     ──► decision `external_agent` (a resumed attempt continues that session)

Each model turn is charged to the task's budget as it is seen; a spent budget raises `BudgetExceeded`, and the
caller kills the agent. plait does not journal these calls: a resume cannot replay them.
"""

from __future__ import annotations

import time

from plait.agent.budget import BudgetExceeded
from plait.agent.external._job import Job
from plait.agent.journal import valid_text
from plait.events.store import redaction
from plait.events.types import AgentSession, AgentStopped, ModelCallFinished, StopReason, ToolCalled, ToolReturned
from plait.messages import ModelResponse, ToolCall, Usage

__all__ = ["Transcript", "logged_session"]


class Transcript:
    """Logs one attempt of an external agent and counts what it spent."""

    def __init__(self, job: Job, agent: str) -> None:
        self.job, self.agent = job, agent
        self._ids = {"run_id": job.log.run_id, "agent": job.agent_id}
        self._redact = redaction(job.log.store)
        self.usage = Usage()
        self.cost = 0.0
        self.steps = 0
        self.names: dict[str, str] = {}
        """Tool names by call id, for the results."""
        self._started = time.monotonic()

    def session(self, session_id: str, *, model: str = "") -> None:
        """The agent's own session id, logged once: a resumed attempt continues it."""
        if session_id and logged_session(self.job, self.agent) != session_id:
            what = f"{self.agent} session {session_id}"
            self.job.log.append(AgentSession(**self._ids, decision=what, model=model, **self._session(session_id)))

    def lost_session(self, session_id: str, why: str) -> None:
        """The agent could not continue its logged session: it starts the attempt again, from its brief."""
        what = f"{self.agent} could not resume session {session_id}; started afresh"
        lost = AgentSession(**self._ids, decision=what, reason=why, lost=True, **self._session(session_id))
        self.job.log.append(lost)

    def _session(self, session_id: str) -> dict[str, str | int]:
        return {"cli": self.agent, "session": session_id, "attempt": self.job.attempt}

    def turn(
        self, text: str, calls: list[ToolCall], usage: Usage, model: str, cost: float | None = None, spec: str = ""
    ) -> None:
        """One model turn: logged with its tool calls, its usage charged (priced by plait as `spec`, by default
        `anthropic:MODEL`, when `cost` is None)."""
        if cost is None:
            priced = spec or f"anthropic:{model}"
            cost = self.job.prices.cost(priced, usage) if self.job.prices is not None else 0.0
        self.steps += 1
        self.usage, self.cost = self.usage + usage, self.cost + cost
        calls = [c.model_copy(update={"name": self._redact(c.name)}) for c in calls]
        response = ModelResponse(text=self._redact(text), tool_calls=tuple(calls), usage=usage, model=model)
        took, self._started = time.monotonic() - self._started, time.monotonic()
        self.job.log.append(
            ModelCallFinished(
                **self._ids,
                call=self.steps,
                attempt=self.job.attempt,
                req_hash=f"{self.agent}:{self.steps}",
                response=response,
                cost_usd=cost,
                duration_s=round(took, 3),
            )
        )
        at = {"step": self.steps, "attempt": self.job.attempt}
        for call in calls:
            self.names[call.id] = call.name
            self.job.log.append(ToolCalled(**self._ids, call=call, **at))
        if self.job.budget is not None:
            self.job.budget.charge(usage, cost)

    def called(self, call: ToolCall) -> None:
        """A tool call the agent made outside a model turn it reported (Codex reports turns after their tools)."""
        self.names[call.id] = call.name
        self.job.log.append(ToolCalled(**self._ids, call=call, step=self.steps + 1, attempt=self.job.attempt))

    def result(self, call_id: str, output: str, is_error: bool, checkpoint: str = "") -> None:
        """A tool call's result, as the agent saw it."""
        self.job.log.append(
            ToolReturned(
                **self._ids,
                call_id=call_id,
                name=self.names.get(call_id, "tool"),
                output=valid_text(self._redact(output))[: self.job.output_limit],
                is_error=is_error,
                checkpoint=checkpoint,
                step=self.steps,
                attempt=self.job.attempt,
            )
        )

    def settle(self, total_usd: float) -> None:
        """The agent's own total for the attempt: what plait's prices did not cover is logged as one more charge."""
        extra = round(total_usd - self.cost, 9)
        if extra > 0:
            self.turn("", [], Usage(), self.agent, cost=extra)
            self.steps -= 1  # not a model turn of its own

    def spent(self) -> str:
        """Why the budget stops the agent, or '' while it may go on."""
        if self.job.budget is None:
            return ""
        try:
            self.job.budget.check()
        except BudgetExceeded as exc:
            return str(exc)
        return ""

    def stopped(self, reason: StopReason, summary: str) -> None:
        summary = valid_text(self._redact(summary))
        self.job.log.append(
            AgentStopped(
                **self._ids, reason=reason, summary=summary, steps=self.steps, usage=self.usage, cost_usd=self.cost
            )
        )


def logged_session(job: Job, agent: str) -> str:
    """The session the log has for this attempt of `agent` ('' when none)."""
    found = ""
    for event in job.log.events(agent=job.agent_id, kinds=["agent_session"]):
        if isinstance(event, AgentSession) and event.attempt == job.attempt and event.cli == agent:
            found = "" if event.lost else event.session
    return found
