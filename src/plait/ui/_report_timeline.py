"""The report's timeline: one lane per agent over wall time, then the merge queue and the gate, as inline SVG."""

from __future__ import annotations

from html import escape

from plait.events.types import Event, ModelCallFinished, ModelCallRetried, ModelCallStarted, ToolCalled
from plait.ui import _fmt
from plait.ui._describe import describe
from plait.ui.runview import RunView

__all__ = ["timeline_svg"]

_LEFT, _PLOT, _LANE, _TOP = 150, 830, 30, 24
_STEPS = (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400)


class _Scale:
    def __init__(self, start: float, end: float) -> None:
        self.start, self.span = start, max(end - start, 1e-3)

    def x(self, ts: float) -> float:
        return round(_LEFT + min(max(ts - self.start, 0.0), self.span) / self.span * _PLOT, 1)

    def w(self, a: float, b: float) -> float:
        return max(round(self.x(b) - self.x(a), 1), 1.5)


def _axis(scale: _Scale, height: float) -> list[str]:
    step = next((s for s in _STEPS if scale.span / s <= 10), _STEPS[-1])
    out = []
    t = 0.0
    while t <= scale.span + 1e-9:
        x = scale.x(scale.start + t)
        out.append(f'<line class="grid" x1="{x}" y1="{_TOP - 6}" x2="{x}" y2="{height}"/>')
        label = f"{t:g}s" if t < 60 else _fmt.duration(t)
        out.append(f'<text class="tick" x="{x}" y="{_TOP - 10}">{escape(label)}</text>')
        t += step
    return out


def _words(event: Event, *, head: bool = False) -> str:
    """A mark's tooltip: who, and what `describe` says of the event (a model call's figures alone, with `head`)."""
    said = describe(event)
    if said is None:
        return ""
    said = said.head() if head else said
    return f"{said.who}: {said.plain}"


def _lane(y: float, label: str, link: str = "") -> list[str]:
    name = f'<text class="lane" x="8" y="{y + 19}">{escape(_fmt.one_line(label, 20))}</text>'
    if link:
        name = f'<a href="#{escape(link)}">{name}</a>'
    return [f'<rect class="lane-bg" x="0" y="{y}" width="{_LEFT + _PLOT + 10}" height="{_LANE}"/>', name]


def _wait_marks(view: RunView, scale: _Scale, rows: dict[str, float]) -> list[str]:
    out = []
    for w in view.waits:
        if w.agent not in rows:
            continue
        end = w.end if w.end is not None else view.ended or view.last_ts
        tip = f"{w.agent} waits for {w.holder} to release {w.path} ({_fmt.duration(end - w.start)})"
        tip += f": {w.why}" if w.why else ""
        out.append(
            f'<rect class="wait" x="{scale.x(w.start)}" y="{rows[w.agent] + 4}" width="{scale.w(w.start, end)}" '
            f'height="{_LANE - 8}" rx="2" data-holder="{escape(w.holder)}" data-path="{escape(w.path)}">'
            f"<title>{escape(tip)}</title></rect>"
        )
    return out


_HATCH = (
    '<defs><pattern id="tl-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect class="hatch-bg" width="6" height="6"/>'
    '<line class="hatch-line" x1="0" y1="0" x2="0" y2="6"/></pattern></defs>'
)


def _agent_marks(view: RunView, events: list[Event], scale: _Scale, rows: dict[str, float]) -> list[str]:
    out: list[str] = []
    for agent in view.agents.values():
        y = rows[agent.id]
        for span in agent.spans:
            end = span.end if span.end is not None else agent.last_ts
            tip = f"{agent.id} attempt {span.attempt}: {span.status}, {_fmt.duration(end - span.start)}"
            out.append(
                f'<rect class="span {escape(span.status)}" x="{scale.x(span.start)}" y="{y + 6}" '
                f'width="{scale.w(span.start, end)}" height="{_LANE - 12}" rx="3"><title>{escape(tip)}</title></rect>'
            )
    out += _wait_marks(view, scale, rows)
    started: dict[str, float] = {}
    for e in events:
        if e.agent not in rows:
            continue
        y = rows[e.agent]
        if isinstance(e, ModelCallStarted):
            started[e.agent] = e.ts
        elif isinstance(e, ModelCallFinished):
            t0 = started.pop(e.agent, e.ts - e.duration_s)
            tip = _words(e, head=True)
            out.append(
                f'<rect class="call" x="{scale.x(t0)}" y="{y + 10}" width="{scale.w(t0, e.ts)}" height="{_LANE - 20}">'
                f"<title>{escape(tip)}</title></rect>"
            )
        elif isinstance(e, ToolCalled):
            tip = _words(e)
            out.append(
                f'<a href="#ev-{e.seq}"><circle class="tool" cx="{scale.x(e.ts)}" cy="{y + _LANE / 2}" r="3.5">'
                f"<title>{escape(tip)}</title></circle></a>"
            )
        elif isinstance(e, ModelCallRetried):
            x, top = scale.x(e.ts), y + 3
            out.append(
                f'<path class="retry" d="M{x - 4},{top} L{x + 4},{top} L{x},{top + 7} Z">'
                f"<title>{escape(_words(e))}</title></path>"
            )
    return out


def _queue_marks(view: RunView, scale: _Scale, merge_y: float, gate_y: float, bottom: float) -> list[str]:
    out: list[str] = []
    for m in view.merges:
        x, cy = scale.x(m.ts), merge_y + _LANE / 2
        tip = _words(m)
        out.append(
            f'<a href="#merge-{m.seq}"><path class="merge {m.outcome}" '
            f'd="M{x},{cy - 7} L{x + 7},{cy} L{x},{cy + 7} L{x - 7},{cy} Z"><title>{escape(tip)}</title></path></a>'
        )
    for g in view.gates:
        start = g.ts - g.duration_s
        tip = f"{_words(g)} ({g.stage}, {g.duration_s:.1f}s)"
        out.append(
            f'<rect class="gate {"pass" if g.passed else "fail"}" x="{scale.x(start)}" y="{gate_y + 7}" '
            f'width="{max(scale.w(start, g.ts), 4)}" height="{_LANE - 14}"><title>{escape(tip)}</title></rect>'
        )
    for i in view.integrations:
        x = scale.x(i.ts)
        tip = _words(i)
        out.append(
            f'<line class="integrated{" ejected" if i.ejected else ""}" x1="{x}" y1="{_TOP}" x2="{x}" y2="{bottom}">'
            f"<title>{escape(tip)}</title></line>"
        )
    return out


def timeline_svg(view: RunView, events: list[Event]) -> str:
    """Who ran when, each model call and tool call, the retries, the merges, the gate and the integrations."""
    start = view.started or (events[0].ts if events else 0.0)
    end = view.ended or view.last_ts
    scale = _Scale(start, end)
    rows: dict[str, float] = {}
    parts: list[str] = []
    y = float(_TOP)
    for agent in view.agents.values():
        rows[agent.id] = y
        parts += _lane(y, agent.id, f"agent-{agent.id}")
        y += _LANE
    merge_y, gate_y = y, y + _LANE
    parts += _lane(merge_y, "merge queue", "merges") + _lane(gate_y, "gate", "merges")
    bottom = gate_y + _LANE
    body = [_HATCH, *_axis(scale, bottom), *parts, *_agent_marks(view, events, scale, rows)]
    body += _queue_marks(view, scale, merge_y, gate_y, bottom)
    width, height = _LEFT + _PLOT + 20, bottom + 6
    return (
        f'<svg class="timeline" viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="timeline of the run" xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>"
    )
