"""Where a run stands, read from its events alone: what `plait resume` continues and `plait runs` lists."""

from __future__ import annotations

from dataclasses import dataclass, field

from plait.agent.budget import Budget, spent
from plait.events.runlog import RunLog
from plait.events.types import (
    AgentStopped,
    Committed,
    Integrated,
    PlanMade,
    RunFinished,
    RunKind,
    RunStarted,
    TaskFinished,
    TaskStarted,
)
from plait.plan_model import Plan
from plait.run._opening import Opening, logged_openings
from plait.run.scheduler import Attempt, TaskResult

__all__ = ["RunState", "charge_earlier_spending", "load_state"]

Key = tuple[str, int]

_STATE_KINDS = (
    "run_started",
    "run_finished",
    "plan",
    "task_started",
    "agent_stopped",
    "commit",
    "task_finished",
    "integrated",
    "run_kind",
)
"""The kinds `load_state` reads: a few per task, never the model calls and tool calls that make up most of a log."""


@dataclass
class RunState:
    run_id: str
    kind: str = ""
    """`investigation`, `session`, or '' for a run that makes a change (the one `plait resume` continues)."""
    started: RunStarted | None = None
    finished: RunFinished | None = None
    plan: Plan | None = None
    one_agent: bool = False
    """The run is one agent on the task as given (its plan was made for it, not by a planner)."""
    attempts: dict[str, int] = field(default_factory=dict)
    """The latest attempt started at each task."""
    bases: dict[Key, str] = field(default_factory=dict)
    """Where each started attempt's worktree began (`task_started`)."""
    openings: dict[Key, Opening] = field(default_factory=dict)
    """Each attempt's start as logged before its worktree was made; one without a base was killed in between."""
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
        """Started and not ended, or stopped by the user: `plait resume` continues it."""
        ended = self.finished is not None and self.finished.status != "interrupted"
        return self.started is not None and not ended

    def settled(self) -> dict[str, TaskResult]:
        """Tasks a resumption must not run again."""
        out = {t: TaskResult("dropped", self.attempts.get(t, 0), why) for t, why in self.dropped.items()}
        for (task, number), status in self.outcomes.items():
            if status == "done":
                out[task] = TaskResult("done", number)
        return out

    def resume_points(self, max_attempts: int) -> dict[str, tuple[int, Attempt | None]]:
        """For each task begun and not settled: the attempt to continue, and the failure before it."""
        points: dict[str, tuple[int, Attempt | None]] = {}
        settled = self.settled()
        for task, number in self.attempts.items():
            if task in settled:
                continue
            previous = self.reasons.get((task, number - 1), "")
            last = Attempt(False, previous) if previous else None
            if self.outcomes.get((task, number)) == "failed":
                points[task] = (number + 1, Attempt(False, self.reasons.get((task, number), "")))
            else:
                points[task] = (number, last)
        return points

    def done(self, task: str) -> bool:
        return any(k[0] == task and v == "done" for k, v in self.outcomes.items())


def load_state(log: RunLog) -> RunState:
    state = RunState(log.run_id)
    current: dict[str, int] = {}
    for event in log.events(kinds=_STATE_KINDS):
        key = (event.agent, current.get(event.agent, 1))
        if isinstance(event, RunStarted):
            state.started = event
        elif isinstance(event, RunFinished):
            state.finished = event
        elif isinstance(event, PlanMade):
            state.plan = event.plan
            state.one_agent = event.source == "single"
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
        elif isinstance(event, RunKind) and not state.kind:
            state.kind = event.what
    state.openings = logged_openings(log)
    for task, number in state.openings:  # a process killed while it made the worktree: that attempt goes on
        state.attempts[task] = max(number, state.attempts.get(task, 0))
    return state


def charge_earlier_spending(run: Budget, log: RunLog, tasks: dict[str, Budget] | None = None) -> None:
    """Charge a resumed run's budgets with what its earlier processes paid; replayed calls are not charged again.

    The run's budget gets everything; with `tasks`, each task's budget gets its own agent's share only.
    """
    paid = log.paid()  # by agent, summed by the store's query: no answer decoded
    if tasks is None:
        run.charge(*spent(paid.values()))
        return
    for agent, (usage, usd) in paid.items():
        if agent in tasks:
            tasks[agent].charge(usage, usd, up=False)
