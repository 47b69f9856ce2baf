"""The one fold of a run's log into its state: agents, attempts, statuses, spending, timings, merges and the gate.

`RunView` takes events in order (`apply`); the summary, the live view, `plait cost` and the report all read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plait.events.types import (
    AgentStopped,
    Committed,
    Decided,
    Event,
    ExpertStarted,
    GateChecked,
    Integrated,
    LeaseChanged,
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
    RunKind,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
    UserSteered,
)
from plait.messages import Usage
from plait.models.pricing import PriceTable, logged_prices
from plait.plan_model import Plan
from plait.trust import REPO_FILE
from plait.ui._state import AgentView, CostLine, Span, Wait, dollars, phase_of, saved_usd, short_args

__all__ = ["RunView"]

_TITLES = {"planning": "plan the work", "reconciliation": "resolve a merge conflict"}
_MERGED = {"clean": "merged", "resolved": "resolved", "conflict": "conflict", "failed": "failed"}


@dataclass
class RunView:
    """A run folded from its events; `apply` takes new events as they come, in order.

    `prices`, when given, weigh the calls instead of the prices the run was started with.
    """

    run_id: str
    prices: PriceTable | None = field(default=None, repr=False)
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
    finish: RunFinished | None = None
    """How the run last ended, as logged (None while it runs again or has not ended)."""
    kind: str = ""
    """`investigation` or `session` for a run led by a lead agent, '' for a run that makes a change."""
    agents: dict[str, AgentView] = field(default_factory=dict)
    plan: list[str] = field(default_factory=list)
    plan_rejections: int = 0
    tasks: dict[str, str] = field(default_factory=dict)
    """How each task ended, as its last `TaskFinished` said."""
    merges: list[MergeStep] = field(default_factory=list)
    gates: list[GateChecked] = field(default_factory=list)
    integrations: list[Integrated] = field(default_factory=list)
    decisions: list[Decided] = field(default_factory=list)
    commits: list[Committed] = field(default_factory=list)
    config_changes: list[str] = field(default_factory=list)
    """Tasks whose commits changed the repository's `.plait.toml`, to be reviewed before it is trusted."""
    experts: dict[str, int] = field(default_factory=dict)
    """Questions each expert answered (by its agent id), errors not counted."""
    waits: list[Wait] = field(default_factory=list)
    """Each wait of a claim for a path another task held, in the order they began."""
    tool_calls: int = 0
    total: CostLine = field(default_factory=lambda: CostLine("total"))
    by_agent: dict[str, CostLine] = field(default_factory=dict)
    """Spending by agent (`(run)` for calls of no agent), in the order each first called its model."""
    by_model: dict[str, CostLine] = field(default_factory=dict)
    by_phase: dict[str, CostLine] = field(default_factory=dict)
    _prices: PriceTable = field(default_factory=PriceTable, repr=False)
    _calling: dict[str, str] = field(default_factory=dict, repr=False)
    """The model each agent's call in flight was sent to."""
    _waiting: dict[tuple[str, str], Wait] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._prices = self.prices or self._prices

    @property
    def model_calls(self) -> int:
        return self.total.calls

    @property
    def usage(self) -> Usage:
        return self.total.usage

    @property
    def cost_usd(self) -> float:
        return self.total.cost_usd

    @property
    def unpriced_calls(self) -> int:
        """Model calls of a model with no price: their dollars are unknown, not zero."""
        return self.total.unpriced_calls

    @property
    def cost_text(self) -> str:
        """The run's dollars, or `unpriced` when its model has no price."""
        return dollars(self.cost_usd, self.model_calls, self.unpriced_calls)

    @classmethod
    def of(cls, run_id: str, events: list[Event], prices: PriceTable | None = None) -> RunView:
        view = cls(run_id, prices)
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

    def _agent(self, event: Event | Decided, *, busy: bool = False) -> AgentView | None:
        """The agent's view; `busy` events (model and tool steps) open a span when none is open."""
        if not event.agent:
            return None
        view = self.agents.get(event.agent)
        if view is None:
            view = self.agents[event.agent] = AgentView(event.agent, title=_TITLES.get(phase_of(event.agent), ""))
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
        elif isinstance(event, Decided):
            self._apply_decision(event)
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
        elif isinstance(event, ModelCallFinished):
            self._spend(event)
        elif isinstance(event, ModelCallStarted):
            self._calling[event.agent] = event.model
            self._apply_step(event)
        else:
            self.tool_calls += isinstance(event, ToolCalled)
            self._apply_step(event)

    def _apply_run(self, event: RunStarted | RunFinished | PlanMade | PlanRejected) -> None:
        if isinstance(event, RunStarted):
            self.task, self.model, self.repo = event.task, event.model, event.repo
            self.base_commit, self.base_ref, self.settings = event.base_commit, event.base_ref, event.settings
            self._prices = self.prices or logged_prices(event.settings)
            self.started = min(self.started or event.ts, event.ts)
            self.status, self.ended, self.finish = "running", None, None
        elif isinstance(event, RunFinished):
            self.status, self.reason, self.ended, self.finish = event.status, event.reason, event.ts, event
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

    def _apply_plan(self, plan: Plan) -> None:
        self.plan = []
        for task in plan.tasks:
            self.plan.append(task.id)
            view = self.agents.setdefault(task.id, AgentView(task.id))
            view.title = view.title or task.title

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
            if REPO_FILE in event.files and event.agent not in self.config_changes:
                self.config_changes.append(event.agent)
            self._agent(event)
            return
        for key in [k for k in self._waiting if k[0] == event.agent]:  # a wait ends with its attempt, even cut short
            self._waiting.pop(key).end = event.ts
        found = self._agent(event)
        if found is None:
            return
        view = found
        view.waiting_for = ""
        if isinstance(event, AgentStopped):
            state = {"finished": "done", "interrupted": "interrupted"}.get(event.reason, "failed")
            view.state, view.now, view.summary = state, "", event.summary
            view.reason = "" if event.reason == "finished" else event.reason
        else:
            self.tasks[event.agent] = event.status
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
            if not event.is_error:
                self.experts[event.agent] = self.experts.get(event.agent, 0) + 1
            view.state, view.now = "ready", ""
            view.summary = f"{view.answered} question(s) answered"
            if view.spans and view.spans[-1].end is None:
                view.spans[-1].end, view.spans[-1].status = event.ts, "done"

    def _spend(self, event: ModelCallFinished) -> None:
        """A model call's spending, on its agent, its model, its phase and the run; priced as the model asked."""
        model = self._calling.pop(event.agent, "") or event.response.model or self.model or "?"
        usage, prices = event.response.usage, self._prices
        saved, billed = saved_usd(prices, model, usage), prices.billed_tokens(model, usage)
        priced = prices.price(model) is not None
        view = self._agent(event, busy=True)
        if view is not None:
            view.now = ""
            self.by_agent.setdefault(view.id, view.spent)
        lines = [
            self.by_agent.setdefault(event.agent or "(run)", CostLine(event.agent or "(run)")),
            self.by_model.setdefault(model, CostLine(model)),
            self.by_phase.setdefault(phase_of(event.agent), CostLine(phase_of(event.agent))),
            self.total,
        ]
        for line in lines:
            line.add(usage, event.cost_usd, saved, billed, priced=priced)

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
        elif isinstance(event, ModelCallRetried):
            view.retries += 1
            view.now = f"retry {event.attempt} in {event.wait_s:.0f}s: {event.reason}"
        elif isinstance(event, ModelCallFailed):
            view.now = f"model failed: {event.error}"
        elif isinstance(event, ToolCalled):
            view.tool_calls += 1
            view.now = f"{event.call.name} {short_args(event.call.arguments, event.call.raw_arguments, 60)}"
        elif isinstance(event, ToolReturned):
            view.now = ""

    def _apply_merge(self, event: MergeStep | GateChecked | Integrated) -> None:
        if isinstance(event, MergeStep):
            self.merges.append(event)
            task = self.agents.setdefault(event.task, AgentView(event.task))
            task.merge = f"{_MERGED[event.outcome]} ({event.rung})"
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

    def _apply_decision(self, event: Decided) -> None:
        """A decision; the run's kind, and a lease: the agent waits for a path, holds it, or no longer does."""
        self.decisions.append(event)
        if isinstance(event, RunKind) and not self.kind:
            self.kind = event.what
        view = self._agent(event)
        if view is None or not isinstance(event, LeaseChanged):
            return
        action, path, holder = event.action, event.path, event.holder
        key = (event.agent, path)
        if action == "wait":
            view.waiting_for = f"{holder} ({path})"
            view.now = f"waits for {holder}: {path}"
            if key not in self._waiting:
                self._waiting[key] = Wait(event.agent, path, holder, event.why, event.ts)
                self.waits.append(self._waiting[key])
            return
        if action in ("claim", "refuse", "cycle", "release") and key in self._waiting:  # granted, refused, ended
            self._waiting.pop(key).end = event.ts
        if action in ("claim", "refuse", "cycle"):
            view.waiting_for = ""
        if action == "claim" and path not in view.claims:
            view.claims.append(path)
        elif action in ("release", "expire") and path in view.claims:
            view.claims.remove(path)
