"""The state of a run as a person follows it (agents, plan, merges, gate, totals), folded from its events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plait.events.types import (
    EXPERT_PREFIX,
    AgentStopped,
    Committed,
    Decision,
    Event,
    ExpertStarted,
    GateChecked,
    Integrated,
    MergeStep,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallStarted,
    NotePosted,
    PlanMade,
    PlanRejected,
    PolicyDecided,
    QuestionAnswered,
    QuestionAsked,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
    UserSteered,
)
from plait.models.base import Usage
from plait.models.pricing import PriceTable, logged_prices
from plait.ui.progress import short_args

__all__ = ["AgentView", "RunView", "Span", "dollars", "phase_of"]

_FINAL = ("done", "failed", "dropped", "interrupted")


def phase_of(agent: str) -> str:
    """The phase an agent's spending belongs to: planning, work, experts or reconciliation."""
    if agent == "planner":
        return "planning"
    if agent.startswith(EXPERT_PREFIX):
        return "experts"
    if agent.startswith(("resolver", "merge")):
        return "reconciliation"
    return "work" if agent else "run"


@dataclass
class Span:
    """One stretch of time an agent was busy: one attempt at its task."""

    start: float
    end: float | None = None
    attempt: int = 1
    status: str = "running"


@dataclass
class AgentView:
    """What one agent is doing and has spent."""

    id: str
    title: str = ""
    state: str = "waiting"
    """waiting, running, done, failed, dropped or interrupted (of its latest attempt)."""
    now: str = ""
    """The tool call in flight, `thinking` while the model answers, or why it waits."""
    attempt: int = 0
    branch: str = ""
    steps: int = 0
    tool_calls: int = 0
    retries: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Model calls of a model with no price: their dollars are unknown, not zero."""
    merge: str = ""
    """Where its branch is in the merge queue: queued, merged (rung), conflict, integrated, ejected."""
    summary: str = ""
    reason: str = ""
    spans: list[Span] = field(default_factory=list)
    last_ts: float = 0.0
    answered: int = 0
    """Questions answered, when the agent is an expert (its state is `ready` between questions)."""
    claims: list[str] = field(default_factory=list)
    """Paths outside its write-set it holds a lease on."""
    waiting_for: str = ""
    """While a claim of it waits: the task it waits for and the path, such as `percent-split (tally/money.py)`."""

    @property
    def finished(self) -> bool:
        return self.state in _FINAL

    @property
    def cost_text(self) -> str:
        """Its dollars, or `unpriced` when its model has no price."""
        return dollars(self.cost_usd, self.steps, self.unpriced_calls)

    def busy_s(self) -> float:
        """Seconds spent working, over every attempt; an open span counts up to the agent's last event."""
        return sum(max((s.end if s.end is not None else self.last_ts) - s.start, 0.0) for s in self.spans)


@dataclass
class RunView:
    """A run folded from its events; `apply` takes new events as they come, in order."""

    run_id: str
    task: str = ""
    model: str = ""
    repo: str = ""
    base_commit: str = ""
    base_ref: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    started: float | None = None
    ended: float | None = None
    last_ts: float = 0.0
    last_seq: int = 0
    status: str = "running"
    reason: str = ""
    branch: str = ""
    commit: str = ""
    agents: dict[str, AgentView] = field(default_factory=dict)
    plan: list[str] = field(default_factory=list)
    plan_rejections: int = 0
    merges: list[MergeStep] = field(default_factory=list)
    gates: list[GateChecked] = field(default_factory=list)
    integrations: list[Integrated] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    commits: list[Committed] = field(default_factory=list)
    model_calls: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Model calls of a model with no price: their dollars are unknown, not zero."""
    _prices: PriceTable = field(default_factory=PriceTable, repr=False)
    _calling: dict[str, str] = field(default_factory=dict, repr=False)
    """The model each agent's call in flight was sent to."""

    @property
    def cost_text(self) -> str:
        """The run's dollars, or `unpriced` when its model has no price."""
        return dollars(self.cost_usd, self.model_calls, self.unpriced_calls)

    @classmethod
    def of(cls, run_id: str, events: list[Event]) -> RunView:
        view = cls(run_id)
        view.apply(events)
        return view

    def apply(self, events: list[Event]) -> None:
        for event in events:
            self._apply(event)

    def elapsed_s(self, now: float) -> float:
        """Wall time of the run: to its end, or to `now` while it has not ended."""
        if self.started is None:
            return 0.0
        return max((self.ended if self.ended is not None else now) - self.started, 0.0)

    def status_text(self, now: float) -> str:
        """`done`, `failed`..., or `running` with how long ago the last event came when that is a while."""
        if self.ended is not None:
            return self.status
        quiet = now - self.last_ts
        return "running" if quiet < 30 else f"running? (no event for {int(quiet)}s)"

    def plan_counts(self) -> dict[str, int]:
        """How many of the planned (or, without a plan, the seen) task agents are in each state."""
        ids = self.plan or [a for a in self.agents if phase_of(a) == "work"]
        counts: dict[str, int] = {}
        for task_id in ids:
            state = self.agents[task_id].state if task_id in self.agents else "waiting"
            counts[state] = counts.get(state, 0) + 1
        return counts

    def _agent(self, event: Event, *, busy: bool = False) -> AgentView | None:
        """The agent's view; `busy` events (model and tool steps) open a span when none is open."""
        if not event.agent:
            return None
        view = self.agents.get(event.agent)
        if view is None:
            titles = {"planning": "plan the work", "reconciliation": "resolve a merge conflict"}
            view = self.agents[event.agent] = AgentView(event.agent, title=titles.get(phase_of(event.agent), ""))
        if busy and (not view.spans or view.spans[-1].end is not None):
            view.spans.append(Span(event.ts, attempt=max(view.attempt, 1)))
            view.state = "running"
        view.last_ts = max(view.last_ts, event.ts)
        return view

    def _apply(self, event: Event) -> None:
        self.last_seq = max(self.last_seq, event.seq)
        self.last_ts = max(self.last_ts, event.ts)
        if self.started is None:
            self.started = event.ts
        if isinstance(event, RunStarted | RunFinished | PlanMade | PlanRejected):
            self._apply_run(event)
        elif isinstance(event, MergeStep | GateChecked | Integrated):
            self._apply_merge(event)
        elif isinstance(event, Decision):
            self.decisions.append(event)
            view = self._agent(event)
            if view is not None and event.topic == "lease":
                _apply_lease(view, event.data)
        elif isinstance(event, TaskStarted | TaskFinished | AgentStopped | Committed):
            self._apply_task(event)
        elif isinstance(event, ExpertStarted | QuestionAsked | QuestionAnswered):
            self._apply_expert(event)
        elif isinstance(event, UserSteered):  # paused: the agent waits before its next model call until resumed
            view = self.agents.get(event.agent)
            if view is not None and event.action == "pause" and not view.finished:
                view.state = "paused"
            elif view is not None and event.action == "resume" and view.state == "paused":
                view.state = "running"
        else:
            self._apply_step(event)

    def _apply_run(self, event: RunStarted | RunFinished | PlanMade | PlanRejected) -> None:
        if isinstance(event, RunStarted):
            self.task, self.model, self.repo = event.task, event.model, event.repo
            self.base_commit, self.base_ref, self.settings = event.base_commit, event.base_ref, event.settings
            self._prices = logged_prices(event.settings)
            self.started = min(self.started or event.ts, event.ts)
            self.status, self.ended = "running", None
        elif isinstance(event, RunFinished):
            self.status, self.reason, self.ended = event.status, event.reason, event.ts
            self.branch, self.commit = event.branch or self.branch, event.commit or self.commit
            for view in self.agents.values():  # what is not a task's attempt ends with the run
                phase = phase_of(view.id)
                if phase != "work" and view.state in ("ready", "running"):
                    view.state, view.now = ("interrupted" if event.status == "interrupted" else "done"), ""
                    if view.spans and view.spans[-1].end is None:  # a resolver was busy until its last step
                        end = event.ts if phase == "experts" else view.last_ts
                        view.spans[-1].end, view.spans[-1].status = end, view.state
        elif isinstance(event, PlanMade):
            self._agent(event)
            self._apply_plan(event.plan)
        else:
            self._agent(event)
            self.plan_rejections += 1

    def _apply_plan(self, plan: dict[str, Any]) -> None:
        tasks = plan.get("tasks")
        if not isinstance(tasks, list):
            return
        self.plan = []
        for task in tasks:
            if not isinstance(task, dict) or not isinstance(task.get("id"), str):
                continue
            self.plan.append(task["id"])
            view = self.agents.setdefault(task["id"], AgentView(task["id"]))
            view.title = view.title or str(task.get("title") or task.get("goal") or "")

    def _apply_task(self, event: TaskStarted | TaskFinished | AgentStopped | Committed) -> None:
        if isinstance(event, TaskStarted):
            view = self.agents.setdefault(event.agent, AgentView(event.agent))
            if view.spans and view.spans[-1].end is None:
                view.spans[-1].end, view.spans[-1].status = event.ts, "superseded"
            view.spans.append(Span(event.ts, attempt=event.attempt))
            view.attempt, view.title, view.branch = event.attempt, event.title, event.branch
            view.state, view.now, view.merge, view.last_ts = "running", "", "", event.ts
            return
        if isinstance(event, Committed):
            self.commits.append(event)
            self._agent(event)
            return
        found = self._agent(event)
        if found is None:
            return
        view = found
        view.waiting_for = ""  # a wait ends with its attempt, even one cut short
        if isinstance(event, AgentStopped):
            state = {"finished": "done", "interrupted": "interrupted"}.get(event.reason, "failed")
            view.state, view.now, view.summary = state, "", event.summary
            view.reason = "" if event.reason == "finished" else event.reason
        else:
            view.state, view.now, view.summary = event.status, "", event.summary or view.summary
            view.reason = event.reason
            if event.status == "done" and not view.merge and self.plan:
                view.merge = "queued"
        if not view.spans:
            view.spans.append(Span(event.ts, attempt=max(view.attempt, 1)))
        view.spans[-1].end, view.spans[-1].status = event.ts, view.state

    def _apply_expert(self, event: ExpertStarted | QuestionAsked | QuestionAnswered) -> None:
        """An expert is `ready` between questions and `running` while it answers one."""
        view = self.agents.get(event.agent)
        if view is None:
            view = self.agents[event.agent] = AgentView(event.agent, state="ready")
        view.last_ts = max(view.last_ts, event.ts)
        if isinstance(event, ExpertStarted):
            view.title = "expert on " + (", ".join(event.area) or "the repository")
        elif isinstance(event, QuestionAsked):
            view.now = f"question {event.number} from {event.asker}"
        else:
            view.answered += 1
            view.state, view.now = "ready", ""
            view.summary = f"{view.answered} question(s) answered"
            if view.spans and view.spans[-1].end is None:
                view.spans[-1].end, view.spans[-1].status = event.ts, "done"

    def _apply_step(self, event: Event) -> None:
        if isinstance(event, NotePosted | PolicyDecided):
            # the gate, the radar and the merge queue post notes and ask the sandbox's policy: they are not agents,
            # and an agent's note or policy decision comes inside a step it already opened
            known = self.agents.get(event.agent)
            if known is not None:
                known.last_ts = max(known.last_ts, event.ts)
            return
        view = self._agent(event, busy=True)
        if view is None:
            return
        if isinstance(event, ModelCallStarted):
            view.now = "thinking…"
            self._calling[view.id] = event.model
        elif isinstance(event, ModelCallRetried):
            view.retries += 1
            view.now = f"retry {event.attempt} in {event.wait_s:.0f}s: {event.reason}"
        elif isinstance(event, ModelCallFinished):
            view.steps += 1
            view.usage, view.cost_usd, view.now = view.usage + event.response.usage, view.cost_usd + event.cost_usd, ""
            self.model_calls += 1
            self.usage, self.cost_usd = self.usage + event.response.usage, self.cost_usd + event.cost_usd
            model = self._calling.pop(view.id, "") or event.response.model or self.model
            if self._prices.price(model) is None:
                view.unpriced_calls, self.unpriced_calls = view.unpriced_calls + 1, self.unpriced_calls + 1
        elif isinstance(event, ModelCallFailed):
            view.now = f"model failed: {event.error}"
        elif isinstance(event, ToolCalled):
            view.tool_calls += 1
            self.tool_calls += 1
            view.now = f"{event.call.name} {short_args(event.call.arguments, event.call.raw_arguments, 60)}"
        elif isinstance(event, ToolReturned):
            view.now = ""

    def _apply_merge(self, event: MergeStep | GateChecked | Integrated) -> None:
        if isinstance(event, MergeStep):
            self.merges.append(event)
            task = self.agents.setdefault(event.task, AgentView(event.task))
            task.merge = {
                "clean": f"merged ({event.rung})",
                "resolved": f"resolved ({event.rung})",
                "conflict": f"conflict ({event.rung})",
                "failed": f"failed ({event.rung})",
            }[event.outcome]
        elif isinstance(event, GateChecked):
            self.gates.append(event)
        else:
            self.integrations.append(event)
            self.branch, self.commit = event.branch or self.branch, event.commit or self.commit
            for task_id in event.tasks:
                if task_id in self.agents:
                    self.agents[task_id].merge = "integrated"
            for task_id in event.ejected:
                if task_id in self.agents:
                    self.agents[task_id].merge = "ejected"


def _apply_lease(view: AgentView, data: dict[str, Any]) -> None:
    """A lease decision of the agent: it waits for a path, holds it, or no longer does."""
    action, path, holder = data.get("action"), str(data.get("path", "")), str(data.get("holder", ""))
    if action == "wait":
        view.waiting_for = f"{holder} ({path})"
        view.now = f"waits for {holder}: {path}"
        return
    if action in ("claim", "refuse", "cycle"):
        view.waiting_for = ""
    if action == "claim" and path not in view.claims:
        view.claims.append(path)
    elif action in ("release", "expire") and path in view.claims:
        view.claims.remove(path)


def dollars(x: float, calls: int, unpriced: int) -> str:
    """Dollars; all calls of an unpriced model read `unpriced`, some of them `$0.0123 + unpriced`."""
    money = f"${x:.4f}" if x < 10 else f"${x:.2f}"
    if unpriced and unpriced >= calls:
        return "unpriced"
    return f"{money} + unpriced" if unpriced else money
