"""The one fold of a run's log into its state: agents, attempts, statuses, spending, timings, merges and the gate.

`RunView` takes events in order (`apply`); the summary, the live view, `plait cost` and the report all read it.
It tells events apart by their kind and prices calls with the plain rule (`plait.models.rates`), so it folds the
events of `plait.ui._fast_events`, read without pydantic, as it folds the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from plait.models.rates import RateTable
from plait.trust import REPO_FILE
from plait.ui._state import AgentView, CostLine, Span, TokenSum, Wait, dollars, phase_of, run_prices, short_args

if TYPE_CHECKING:  # read by their kind: a log read without the models is folded too
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
        PlanMade,
        PlanRejected,
        QuestionAnswered,
        QuestionAsked,
        RunFinished,
        RunKind,
        RunStarted,
        TaskFinished,
        TaskStarted,
        ToolCalled,
        UserSteered,
    )
    from plait.plan_model import Plan

__all__ = ["RunView"]

_RUN = frozenset({"run_started", "run_finished", "plan", "plan_rejected"})
_MERGE = frozenset({"merge", "gate", "integrated"})
_DECIDED = frozenset(
    "decision lease notes_delivered compacted user_said run_kind placed verify dispatched opening carried debts"
    " agent_session mcp_tools lead_replied".split()
)
"""The kinds of the decisions (`plait.events.types.Decided` and its subclasses; a test keeps the two equal)."""
_TASK = frozenset({"task_started", "task_finished", "agent_stopped", "commit"})
_EXPERT = frozenset({"expert", "question", "answer"})
_TITLES = {"planning": "plan the work", "reconciliation": "resolve a merge conflict"}
_MERGED = {"clean": "merged", "resolved": "resolved", "conflict": "conflict", "failed": "failed"}


@dataclass
class RunView:
    """A run folded from its events; `apply` takes new events as they come, in order.

    `prices`, when given, weigh the calls instead of the prices the run was started with.
    """

    run_id: str
    prices: RateTable[Any] | None = field(default=None, repr=False)
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
    _prices: RateTable[Any] = field(default_factory=lambda: run_prices({}), repr=False)
    _calling: dict[str, str] = field(default_factory=dict, repr=False)
    """The model each agent's call in flight was sent to."""
    _waiting: dict[tuple[str, str], Wait] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._prices = self.prices or self._prices

    @property
    def model_calls(self) -> int:
        return self.total.calls

    @property
    def usage(self) -> TokenSum:
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
    def of(cls, run_id: str, events: list[Event], prices: RateTable[Any] | None = None) -> RunView:
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
        kind = event.kind
        if kind in _RUN:
            self._apply_run(cast("RunStarted | RunFinished | PlanMade | PlanRejected", event))
        elif kind in _MERGE:
            self._apply_merge(cast("MergeStep | GateChecked | Integrated", event))
        elif kind in _DECIDED:
            self._apply_decision(cast("Decided", event), kind)
        elif kind in _TASK:
            self._apply_task(cast("TaskStarted | TaskFinished | AgentStopped | Committed", event))
        elif kind in _EXPERT:
            self._apply_expert(cast("ExpertStarted | QuestionAsked | QuestionAnswered", event))
        elif kind == "steer":  # paused: the agent waits before its next model call until resumed
            steered = cast("UserSteered", event)
            view = self.agents.get(event.agent)
            if view is not None and steered.action == "pause" and not view.finished:
                view.state = "paused"
            elif view is not None and steered.action == "resume" and view.state == "paused":
                view.state = "running"
        elif kind == "model_response":
            self._spend(cast("ModelCallFinished", event))
        elif kind == "model_request":
            self._calling[event.agent] = cast("ModelCallStarted", event).model
            self._apply_step(event)
        else:
            self.tool_calls += kind == "tool_call"
            self._apply_step(event)

    def _apply_run(self, event: RunStarted | RunFinished | PlanMade | PlanRejected) -> None:
        if event.kind == "run_started":
            self.task, self.model, self.repo = event.task, event.model, event.repo
            self.base_commit, self.base_ref, self.settings = event.base_commit, event.base_ref, event.settings
            self._prices = self.prices or run_prices(event.settings)
            self.started = min(self.started or event.ts, event.ts)
            self.status, self.ended, self.finish = "running", None, None
        elif event.kind == "run_finished":
            self.status, self.reason, self.ended, self.finish = event.status, event.reason, event.ts, event
            self.branch, self.commit = event.branch or self.branch, event.commit or self.commit
            for view in self.agents.values():  # what is not a task's attempt ends with the run
                phase = phase_of(view.id)
                if phase != "work" and view.state in ("ready", "running"):
                    view.state, view.now = ("interrupted" if event.status == "interrupted" else "done"), ""
                    if view.spans and view.spans[-1].end is None:  # a resolver was busy until its last step
                        end = event.ts if phase == "experts" else view.last_ts
                        view.spans[-1].end, view.spans[-1].status = end, view.state
        elif event.kind == "plan":
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
        if event.kind == "task_started":
            view = self.agents.setdefault(event.agent, AgentView(event.agent))
            if view.spans and view.spans[-1].end is None:
                view.spans[-1].end, view.spans[-1].status = event.ts, "superseded"
            view.spans.append(Span(event.ts, attempt=event.attempt))
            view.attempt, view.title, view.branch = event.attempt, event.title, event.branch
            view.state, view.now, view.merge, view.last_ts = "running", "", "", event.ts
            return
        if event.kind == "commit":
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
        if event.kind == "agent_stopped":
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
        if event.kind == "expert":
            view.title = "expert on " + (", ".join(event.area) or "the repository")
        elif event.kind == "question":
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
        saved, billed = prices.saved_usd(model, usage), prices.billed_tokens(model, usage)
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
        if event.kind in ("note", "policy"):
            # the gate, the radar and the merge queue post notes and ask the sandbox's policy: they are not agents,
            # and an agent's note or policy decision comes inside a step it already opened
            known = self.agents.get(event.agent)
            if known is not None:
                known.last_ts = max(known.last_ts, event.ts)
            return
        view = self._agent(event, busy=True)
        if view is None:
            return
        kind = event.kind
        if kind == "model_request":
            view.now = "thinking…"
        elif kind == "model_retry":
            retried = cast("ModelCallRetried", event)
            view.retries += 1
            view.now = f"retry {retried.attempt} in {retried.wait_s:.0f}s: {retried.reason}"
        elif kind == "model_error":
            view.now = f"model failed: {cast('ModelCallFailed', event).error}"
        elif kind == "tool_call":
            call = cast("ToolCalled", event).call
            view.tool_calls += 1
            view.now = f"{call.name} {short_args(call.arguments, call.raw_arguments, 60)}"
        elif kind == "tool_result":
            view.now = ""

    def _apply_merge(self, event: MergeStep | GateChecked | Integrated) -> None:
        if event.kind == "merge":
            self.merges.append(event)
            task = self.agents.setdefault(event.task, AgentView(event.task))
            task.merge = f"{_MERGED[event.outcome]} ({event.rung})"
        elif event.kind == "gate":
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

    def _apply_decision(self, event: Decided, kind: str) -> None:
        """A decision; the run's kind, and a lease: the agent waits for a path, holds it, or no longer does."""
        self.decisions.append(event)
        if kind == "run_kind" and not self.kind:
            self.kind = cast("RunKind", event).what
        view = self._agent(event)
        if view is None or kind != "lease":
            return
        event = cast("LeaseChanged", event)
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
