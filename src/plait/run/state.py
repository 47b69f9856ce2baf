"""Where a run stands, read from its events alone: what `plait resume` continues and `plait runs` lists."""

from __future__ import annotations

from dataclasses import dataclass, field

from plait.events.store import EventStore
from plait.events.types import (
    AgentStopped,
    Committed,
    Integrated,
    PlanMade,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
)
from plait.plan.model import Plan

__all__ = ["RunState", "load_state"]

Key = tuple[str, int]


@dataclass
class RunState:
    run_id: str
    started: RunStarted | None = None
    finished: RunFinished | None = None
    plan: Plan | None = None
    attempts: dict[str, int] = field(default_factory=dict)
    """The latest attempt started at each task."""
    bases: dict[Key, str] = field(default_factory=dict)
    outcomes: dict[Key, str] = field(default_factory=dict)
    """How each attempt ended: done, failed or interrupted; absent when its process died first."""
    reasons: dict[Key, str] = field(default_factory=dict)
    commits: dict[Key, str] = field(default_factory=dict)
    agent_done: dict[Key, str] = field(default_factory=dict)
    """Attempts whose agent finished its work, with its summary."""
    dropped: dict[str, str] = field(default_factory=dict)
    integrated: set[str] = field(default_factory=set)

    @property
    def unfinished(self) -> bool:
        return self.started is not None and self.finished is None

    def done(self, task: str) -> bool:
        return any(k[0] == task and v == "done" for k, v in self.outcomes.items())


def load_state(store: EventStore, run_id: str) -> RunState:
    state = RunState(run_id)
    current: dict[str, int] = {}
    for event in store.events(run_id):
        key = (event.agent, current.get(event.agent, 1))
        if isinstance(event, RunStarted):
            state.started = event
        elif isinstance(event, RunFinished):
            state.finished = event
        elif isinstance(event, PlanMade):
            state.plan = Plan.model_validate(event.plan)
        elif isinstance(event, TaskStarted):
            current[event.agent] = event.attempt
            state.attempts[event.agent] = max(event.attempt, state.attempts.get(event.agent, 0))
            state.bases[(event.agent, event.attempt)] = event.base_commit
        elif isinstance(event, AgentStopped) and event.reason == "finished":
            state.agent_done[key] = event.summary
        elif isinstance(event, Committed):
            state.commits[key] = event.sha
        elif isinstance(event, TaskFinished) and event.status == "dropped":
            state.dropped[event.agent] = event.reason
        elif isinstance(event, TaskFinished):
            state.outcomes[key] = event.status
            state.reasons[key] = event.reason
        elif isinstance(event, Integrated):
            state.integrated.update(event.tasks)
    return state
