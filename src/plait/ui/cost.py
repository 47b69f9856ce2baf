"""`plait cost`: what a run spent, by agent, by model and by phase, and what running in parallel saved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plait.ui._expert_cost import SAVING_NOTE, ExpertCost, expert_costs, saving_note
from plait.ui.runview import CostLine, RunView, Span, phase_of

if TYPE_CHECKING:  # `plait cost` reads a log without the models and prices it with the plain rule
    from plait.events.types import Event
    from plait.models.pricing import Price, PriceTable
    from plait.models.rates import RateTable

__all__ = ["SAVING_NOTE", "CostBreakdown", "CostLine", "ExpertCost", "cost_breakdown", "prices_of"]


@dataclass
class CostBreakdown:
    """The spending of a run and its parallel speed-up, from its events."""

    by_agent: dict[str, CostLine]
    by_model: dict[str, CostLine]
    by_phase: dict[str, CostLine]
    total: CostLine
    wall_s: float
    """Wall time of the run."""
    busy_s: dict[str, float]
    """Seconds each agent was busy, over all its attempts; waiting for a file another task held is not busy."""
    covered_s: float
    """Wall time during which at least one agent was busy."""
    experts: list[ExpertCost] = field(default_factory=list)
    """The run's experts: questions answered, spending, and the reading they saved the askers (estimated)."""
    kind: str = ""
    """`investigation` or `session` for a run led by a lead agent, '' for a run that makes a change."""
    tasks: int = 0
    """The tasks of the run's plan (0: no plan logged)."""

    @property
    def parallel(self) -> bool:
        """Whether the run's agents split a task: only then is a speed-up over one after another meaningful."""
        return self.kind not in ("investigation", "session") and self.tasks != 1

    @property
    def experts_spent_tokens(self) -> int:
        return sum(e.spent_tokens for e in self.experts)

    @property
    def experts_saved_tokens(self) -> int:
        return sum(e.saved_tokens for e in self.experts)

    @property
    def sequential_s(self) -> float:
        """How long the same agents would have taken one after another.

        An expert answers while its asker waits: that time is counted in the asker's already.
        """
        return sum(s for agent, s in self.busy_s.items() if phase_of(agent) != "experts")

    @property
    def speedup(self) -> float:
        return self.sequential_s / self.wall_s if self.wall_s > 0 else 1.0

    @property
    def idle_s(self) -> float:
        """Wall time with no agent busy: starting up, merging, the gate, waiting."""
        return max(self.wall_s - self.covered_s, 0.0)

    def as_json(self) -> dict[str, Any]:
        time: dict[str, Any] = {"wall_s": round(self.wall_s, 3)}
        if self.parallel:
            time |= {
                "sequential_s": round(self.sequential_s, 3),
                "speedup": round(self.speedup, 3),
                "idle_s": round(self.idle_s, 3),
            }
        return {
            "kind": self.kind or "run",
            "total": self.total.as_json(),
            "by_agent": [line.as_json() for line in self.by_agent.values()],
            "by_model": [line.as_json() for line in self.by_model.values()],
            "by_phase": [line.as_json() for line in self.by_phase.values()],
            "time": {**time, "busy_s": {k: round(v, 3) for k, v in self.busy_s.items()}},
            "experts": {
                "by_expert": [e.as_json() for e in self.experts],
                "spent_tokens": self.experts_spent_tokens,
                "cost_usd": round(sum(e.cost_usd for e in self.experts), 6),
                "saved_tokens_estimate": self.experts_saved_tokens,
                "note": saving_note(self.experts),
            },
        }


def prices_of(view: RunView, overrides: dict[str, Price] | None = None) -> PriceTable:
    """The price table the run was started with (its settings' prices), then `overrides`."""
    from plait.models.pricing import logged_prices

    return logged_prices(view.settings, overrides)


def _covered(spans: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def cost_breakdown(events: list[Event], prices: RateTable[Any] | None = None) -> CostBreakdown:
    """The run's spending as its fold (`RunView`) sums it; times are as of the run's end, or its last event so far."""
    view = RunView.of(events[0].run_id if events else "", events, prices)
    end = view.ended or view.last_ts
    waits: dict[str, list[tuple[float, float]]] = {}
    for wait in view.waits:
        waits.setdefault(wait.agent, []).append((wait.start, end if wait.end is None else wait.end))
    spans: list[tuple[float, float]] = []
    busy: dict[str, float] = {}
    for agent in view.agents.values():
        closed = _minus([_closed(s, agent.last_ts) for s in agent.spans], waits.get(agent.id, []))
        if agent.spans:
            busy[agent.id] = sum(e - s for s, e in closed)
            spans.extend(closed)
    phases: dict[str, CostLine] = {
        p: view.by_phase[p] for p in ("planning", "work", "experts", "reconciliation", "run") if p in view.by_phase
    }
    spending = {a: (line.calls, line.usage, line.cost_usd) for a, line in view.by_agent.items()}
    experts = expert_costs(events, spending)
    wall = view.elapsed_s(end)
    return CostBreakdown(
        view.by_agent,
        view.by_model,
        phases,
        view.total,
        wall,
        busy,
        _covered(spans),
        experts,
        view.kind,
        len(view.plan),
    )


def _minus(spans: list[tuple[float, float]], cuts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """`spans` without the time in `cuts`."""
    for cut_start, cut_end in cuts:
        kept: list[tuple[float, float]] = []
        for start, end in spans:
            if cut_end <= start or cut_start >= end:
                kept.append((start, end))
                continue
            if start < cut_start:
                kept.append((start, cut_start))
            if cut_end < end:
                kept.append((cut_end, end))
        spans = kept
    return spans


def _closed(span: Span, end: float) -> tuple[float, float]:
    return span.start, max(span.end if span.end is not None else end, span.start)
