"""`plait report --html`: one self-contained HTML file of a run, readable offline in any browser."""

from __future__ import annotations

import time
from collections.abc import Mapping
from html import escape
from pathlib import Path

from plait.events.types import Event
from plait.redact import Redactor
from plait.ui import _fmt, _report_parts
from plait.ui._report_assets import CSS, JS
from plait.ui._report_costline import cost_chart_svg
from plait.ui._report_diff import diff_section, task_diffs
from plait.ui._report_graph import plan_graph_svg
from plait.ui._report_timeline import timeline_svg
from plait.ui._safe import visible
from plait.ui.cost import cost_breakdown
from plait.ui.feed import redact_event
from plait.ui.runview import RunView

__all__ = ["render_html", "task_diffs", "write_report"]

_LEGEND = (
    '<p class="legend"><span><i style="background:var(--ok)"></i>agent busy (done)</span>'
    '<span><i style="background:var(--bad)"></i>failed attempt / retry / conflict</span>'
    '<span><i style="background:var(--call)"></i>model call</span>'
    '<span><i class="wait"></i>waiting for a path another task holds</span>'
    '<span><i style="background:var(--accent);border-radius:50%"></i>tool call (click: transcript)</span>'
    '<span><i style="background:var(--warn)"></i>resolved merge</span>'
    "<span>│ integration</span></p>"
)


def _facts(view: RunView, wall: float, speedup: float) -> str:
    rows = [
        ("model", escape(view.model)),
        ("base", f"{escape(view.base_ref)} <code>{escape(view.base_commit[:10])}</code>"),
        ("result", f"{escape(view.branch)} <code>{escape(view.commit[:10])}</code>" if view.commit else "—"),
        ("started", escape(time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(view.started or 0)))),
        ("wall time", f"{_fmt.duration(wall)} ({speedup:.2f}× over one after another)"),
        ("agents", str(len(view.agents))),
        ("model calls", str(view.model_calls)),
        ("tool calls", str(view.tool_calls)),
        ("tokens", f"{view.usage.input_tokens} in ({view.usage.cached_tokens} cached), {view.usage.output_tokens} out"),
        ("cost", _fmt.usd(view.cost_usd)),
    ]
    if view.reason:
        rows.append(("reason", escape(view.reason)))
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def render_html(
    events: list[Event],
    *,
    diffstat: str = "",
    redact: Redactor | None = None,
    diffs: Mapping[str, str] | None = None,
) -> str:
    """The report of the run whose events these are; every string is redacted before it is written.

    Args:
        events: Every event of one run, in order.
        diffstat: `git diff --stat` of the base against the result, when the repository is at hand.
        redact: What hides secrets (the environment's secrets by default).
        diffs: Each task's patch against the run's base (`_report_diff.task_diffs`), when the repository is at hand.

    Returns:
        A complete HTML document with its style, script and timeline inline.
    """
    redact = redact if redact is not None else Redactor()
    events = [redact_event(e, redact) for e in events]
    patches = {task: visible(redact(diff)) for task, diff in (diffs or {}).items()}
    run_id = events[0].run_id if events else "?"
    view = RunView.of(run_id, events)
    costs = cost_breakdown(events)
    status = view.status if view.ended is not None else "unfinished"
    sections = [
        ("timeline", "Timeline", timeline_svg(view, events) + _LEGEND),
        ("plan", "Plan and its dependencies", plan_graph_svg(view, events)),
        ("agents", "Agents", _report_parts.agents_section(view, costs)),
        ("merges", "Merge decisions and the gate", _report_parts.merges_section(view)),
        ("cost", "Cost", cost_chart_svg(view, events) + _report_parts.cost_section(costs)),
        (
            "changes",
            "Changes",
            _report_parts.changes_section(view, visible(redact(diffstat))) + diff_section(view, events, patches),
        ),
        ("transcripts", "Transcripts", _report_parts.transcripts_section(view, events)),
    ]
    nav = "".join(f'<a href="#{key}">{title.split()[0]}</a>' for key, title, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{title}</h2>{html}</section>' for key, title, html in sections)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>plait run {escape(run_id)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>plait run <code>{escape(run_id)}</code> <span class="badge {escape(status)}">'
        f'{escape(status)}</span></h1><p class="task">{escape(view.task)}</p>'
        f"{_facts(view, costs.wall_s, costs.speedup)}<nav>{nav}</nav></header>"
        f"{body}<script>{JS}</script></body></html>\n"
    )


def write_report(
    path: Path,
    events: list[Event],
    *,
    diffstat: str = "",
    redact: Redactor | None = None,
    diffs: Mapping[str, str] | None = None,
) -> Path:
    """Write the HTML report of a run to `path` (its folder is created); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(events, diffstat=diffstat, redact=redact, diffs=diffs), encoding="utf-8")
    return path
