"""The report's cost over time in inline SVG: what the run had spent at each moment of its wall time, one line per
phase and one for the total, in dollars, or in billed tokens when a model of the run has no price."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from plait.events.types import Event, ModelCallFinished, ModelCallStarted
from plait.ui import _fmt
from plait.ui.cost import prices_of
from plait.ui.runview import RunView, phase_of

__all__ = ["Series", "cost_chart_svg", "cost_series"]

_LEFT, _PLOT, _TOP, _HEIGHT, _BOTTOM = 80, 800, 14, 170, 26
_PHASES = ("planning", "work", "experts", "reconciliation", "run")


@dataclass
class Series:
    """One line of the chart: the running total after each model call, as (time, total)."""

    name: str
    points: list[tuple[float, float]] = field(default_factory=list)

    @property
    def final(self) -> float:
        return self.points[-1][1] if self.points else 0.0


def cost_series(view: RunView, events: list[Event]) -> tuple[str, list[Series]]:
    """The unit (`$` or `billed tokens`) and the running totals by phase, the total last."""
    prices = prices_of(view)
    dollars = view.unpriced_calls == 0
    pending: dict[str, str] = {}
    by_phase: dict[str, Series] = {}
    total = Series("total")
    for event in events:
        if isinstance(event, ModelCallStarted):
            pending[event.agent] = event.model
        elif isinstance(event, ModelCallFinished):
            model = pending.pop(event.agent, "") or event.response.model or view.model
            spent = event.cost_usd if dollars else prices.billed_tokens(model, event.response.usage)
            for line in (by_phase.setdefault(phase_of(event.agent), Series(phase_of(event.agent))), total):
                line.points.append((event.ts, line.final + spent))
    phases = [by_phase[p] for p in _PHASES if p in by_phase]
    return ("$" if dollars else "billed tokens"), [*(phases if len(phases) > 1 else []), total]


def _label(value: float, unit: str) -> str:
    return f"${value:.4f}" if unit == "$" else f"{_fmt.tokens(round(value))} tokens"


def cost_chart_svg(view: RunView, events: list[Event]) -> str:
    """Cumulative spending against wall time, as a step line per phase and one for the total."""
    unit, series = cost_series(view, events)
    if not series[-1].points:
        return "<p>No model calls in this run.</p>"
    start = view.started or series[-1].points[0][0]
    end = max(view.ended or view.last_ts, series[-1].points[-1][0])
    span, top = max(end - start, 1e-3), max(series[-1].final, 1e-9)

    def x(ts: float) -> float:
        return round(_LEFT + min(max(ts - start, 0.0), span) / span * _PLOT, 1)

    def y(v: float) -> float:
        return round(_TOP + _HEIGHT - v / top * _HEIGHT, 1)

    out = [
        f'<line class="axis" x1="{_LEFT}" y1="{_TOP + _HEIGHT}" x2="{_LEFT + _PLOT}" y2="{_TOP + _HEIGHT}"/>',
        f'<line class="axis" x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + _HEIGHT}"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        out.append(f'<text class="tick" x="{_LEFT - 38}" y="{y(top * frac) + 4}">{_label(top * frac, unit)}</text>')
        t = span * frac
        out.append(f'<text class="tick" x="{x(start + t)}" y="{_TOP + _HEIGHT + 16}">{escape(_fmt.duration(t))}</text>')
    for line in series:
        points = [(x(start), y(0.0))]
        for ts, value in line.points:
            points += [(x(ts), points[-1][1]), (x(ts), y(value))]
        points.append((x(end), points[-1][1]))
        tip = f"{line.name}: {_label(line.final, unit)} over {len(line.points)} model calls"
        out.append(
            f'<polyline class="cost-line {escape(line.name)}" data-final="{line.final:.6f}" '
            f'points="{" ".join(f"{a},{b}" for a, b in points)}"><title>{escape(tip)}</title></polyline>'
        )
    legend = "".join(
        f'<span><i class="cost-key {escape(s.name)}"></i>{escape(s.name)} {escape(_label(s.final, unit))}</span>'
        for s in series
    )
    width, height = _LEFT + _PLOT + 20, _TOP + _HEIGHT + _BOTTOM
    return (
        f'<svg class="costs" viewBox="0 0 {width} {height}" width="100%" role="img" data-unit="{escape(unit)}" '
        f'aria-label="spending over the run\'s wall time" xmlns="http://www.w3.org/2000/svg">'
        + "".join(out)
        + f'</svg><p class="legend">Spent so far ({escape(unit)}) against wall time: {legend}</p>'
    )
