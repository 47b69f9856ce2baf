"""The report's sections as HTML: agents, merge decisions, cost, changes and every agent's transcript."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape

from plait.events.types import Event, ModelCallFinished, PolicyDecided, PromptGiven, ToolCalled, ToolReturned
from plait.ui import _fmt
from plait.ui._describe import describe
from plait.ui._expert_cost import saving_note, trade_line
from plait.ui.cost import CostBreakdown, CostLine
from plait.ui.runview import RunView

__all__ = ["agents_section", "changes_section", "cost_section", "merges_section", "transcripts_section"]

_MAX_OUTPUT = 20_000


def table(head: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """An HTML table; cells are HTML already (escape what needs it before)."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _ago(view: RunView, ts: float) -> str:
    return f"+{(ts - (view.started or ts)):.1f}s"


def agents_section(view: RunView, costs: CostBreakdown) -> str:
    rows = []
    for a in view.agents.values():
        state = f'<span class="badge {escape(a.state)}">{escape(a.state)}</span>'
        rows.append(
            [
                f'<a href="#agent-{escape(a.id)}">{escape(a.id)}</a>',
                escape(a.title),
                state,
                str(max(a.attempt, 1 if a.spans else 0)),
                str(a.steps),
                str(a.tool_calls),
                str(a.retries),
                _fmt.tokens(a.usage.total_tokens),
                a.cost_text,
                _fmt.duration(costs.busy_s.get(a.id, 0.0)),
                escape(a.merge),
                escape(_fmt.one_line(a.summary or a.reason, 120)),
            ]
        )
    head = [
        "agent",
        "task",
        "state",
        "attempts",
        "calls",
        "tools",
        "retries",
        "tokens",
        "cost",
        "busy",
        "merge",
        "summary",
    ]
    return table(head, rows, "num")


def merges_section(view: RunView) -> str:
    merge_rows = [
        [
            f'<span id="merge-{m.seq}">{_ago(view, m.ts)}</span>',
            escape(m.task),
            escape(m.rung),
            f'<span class="badge {escape(m.outcome)}">{escape(m.outcome)}</span>',
            escape(", ".join(m.files)),
            escape(m.detail),
            f"<code>{escape(m.commit[:10])}</code>",
        ]
        for m in view.merges
    ]
    gate_rows = [
        [
            _ago(view, g.ts),
            f"<code>{escape(g.commit[:10])}</code>",
            escape(g.stage),
            f'<span class="badge {"done" if g.passed else "failed"}">{"passed" if g.passed else "failed"}</span>',
            escape(", ".join(g.tasks)),
            f"{g.duration_s:.1f}s",
            f"<pre>{escape(g.output[-2000:])}</pre>" if g.output else "",
        ]
        for g in view.gates
    ]
    integrated = [
        [
            _ago(view, i.ts),
            f"<code>{escape(i.commit[:10])}</code>",
            escape(", ".join(i.tasks)),
            escape(", ".join(i.ejected)),
            escape(i.reason),
        ]
        for i in view.integrations
    ]
    decisions = [
        [_ago(view, d.ts), escape(d.agent or "run"), escape(d.topic), escape(d.decision), escape(d.reason)]
        for d in view.decisions
        if d.topic != "notes"
    ]
    parts = [
        "<h3>Merge queue</h3>",
        table(["when", "task", "rung", "outcome", "files", "detail", "commit"], merge_rows) if merge_rows else "",
        "" if merge_rows else "<p>No merges in this run.</p>",
        "<h3>Gate</h3>",
        table(["when", "commit", "stage", "result", "tasks", "took", "output"], gate_rows) if gate_rows else "",
        "" if gate_rows else "<p>The gate did not run.</p>",
        "<h3>Integration</h3>",
        table(["when", "commit", "integrated", "ejected", "reason"], integrated) if integrated else "<p>None.</p>",
        "<h3>Decisions</h3>",
        table(["when", "by", "topic", "decision", "reason"], decisions) if decisions else "<p>None.</p>",
    ]
    return "".join(parts)


def _cost_rows(lines: Iterable[CostLine], busy: dict[str, float] | None = None) -> list[list[str]]:
    rows = []
    for line in lines:
        u = line.usage
        row = [escape(line.name), str(line.calls), str(u.input_tokens), str(u.cached_tokens), str(u.output_tokens)]
        unpriced = line.unpriced_calls and line.unpriced_calls >= line.calls
        row += ["unpriced" if unpriced else f"{line.cost_usd:.6f}", f"{line.saved_usd:.6f}"]
        if busy is not None:
            row.append(_fmt.duration(busy.get(line.name, 0.0)))
        rows.append(row)
    return rows


def cost_section(costs: CostBreakdown) -> str:
    head = ["calls", "input tokens", "cached", "output tokens", "cost $", "cache saved $"]
    t = costs.total
    total = _cost_rows([t])[0]
    spent = _fmt.usd(t.cost_usd, calls=t.calls, unpriced=t.unpriced_calls)
    return "".join(
        [
            table(["agent", *head, "busy"], [*_cost_rows(costs.by_agent.values(), costs.busy_s), [*total, ""]], "num"),
            table(["model", *head], [*_cost_rows(costs.by_model.values()), total], "num"),
            table(["phase", *head], [*_cost_rows(costs.by_phase.values()), total], "num"),
            f'<p class="total" data-total-usd="{t.cost_usd:.6f}">Total <b>{spent}</b> for {t.calls} '
            f"model calls; cached input saved {_fmt.usd(t.saved_usd)}.</p>",
            f"<p>Wall time {_fmt.duration(costs.wall_s)}; the same agents one after another: "
            f"{_fmt.duration(costs.sequential_s)} (<b>{costs.speedup:.2f}×</b> speed-up). No agent was busy for "
            f"{_fmt.duration(costs.idle_s)} (start-up, merging, the gate).</p>"
            if costs.parallel
            else f"<p>Wall time {_fmt.duration(costs.wall_s)}.</p>",
            _experts_part(costs),
        ]
    )


def _experts_part(costs: CostBreakdown) -> str:
    """Each expert's spending and questions, and what it saved the agents that asked (an estimate)."""
    if not costs.experts:
        return ""
    rows = [
        [
            escape(e.name),
            f"{e.answered}/{e.questions}",
            str(e.from_memory),
            str(e.reads),
            escape(", ".join(f"{a} ({n})" for a, n in e.askers.items())),
            str(e.spent_tokens),
            f"{e.cost_usd:.6f}",
            str(e.saved_tokens),
        ]
        for e in costs.experts
    ]
    head = ["expert", "answered", "from memory", "reads", "asked by", "tokens", "cost $", "saved reading (est. tokens)"]
    note = saving_note(costs.experts)
    return (
        "<h3>Experts</h3>"
        + table(head, rows, "num")
        + f'<p class="experts" data-spent-tokens="{costs.experts_spent_tokens}" '
        f'data-saved-tokens="{costs.experts_saved_tokens}">{escape(trade_line(costs.experts))}.</p>'
        + f"<p><small>{escape(note[0].upper() + note[1:])}.</small></p>"
    )


def changes_section(view: RunView, diffstat: str) -> str:
    rows = [
        [
            escape(c.agent or "run"),
            f"<code>{escape(c.sha[:10])}</code>",
            escape(c.branch),
            str(len(c.files)),
            escape(", ".join(c.files)),
        ]
        for c in view.commits
    ]
    out = table(["agent", "commit", "branch", "files", "paths"], rows) if rows else "<p>No commits.</p>"
    if diffstat.strip():
        out += f'<h3>Base to result</h3><pre class="diffstat">{escape(diffstat)}</pre>'
    return out


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_OUTPUT else text[: _MAX_OUTPUT // 2] + "\n…\n" + text[-_MAX_OUTPUT // 2 :]


def _step(event: Event) -> str | None:
    if isinstance(event, ToolCalled):
        args = event.call.arguments
        shown = json.dumps(args, indent=2) if args is not None else event.call.raw_arguments
        return (
            f'<div class="step tool" id="ev-{event.seq}"><span class="what">→ <b>{escape(event.call.name)}</b></span>'
            f"<pre>{escape(_clip(shown))}</pre></div>"
        )
    if isinstance(event, ToolReturned):
        cls = "result error" if event.is_error else "result"
        return f'<div class="step {cls}"><pre>{escape(_clip(event.output)) or "(no output)"}</pre></div>'
    said = None if isinstance(event, PolicyDecided) and event.verdict == "allow" else describe(event)
    if said is None:
        return None
    if isinstance(event, ModelCallFinished):  # the reply in full, below its figures
        text = f"<p>{escape(event.response.text)}</p>" if event.response.text.strip() else ""
        return f'<div class="step model"><span class="meta">{said.head().html()}</span>{text}</div>'
    cls = "prompt" if isinstance(event, PromptGiven) else _STEP_CLASS.get(said.tone, said.tone)
    return f'<div class="step {cls}">{said.html()}</div>'


_STEP_CLASS = {"": "mark", "good": "mark", "dim": "note", "info": "note"}
"""The report's class of a step, by its tone (the report styles mark, warn, bad, note and prompt)."""


def transcripts_section(view: RunView, events: list[Event]) -> str:
    out = ['<p><input id="filter" type="search" placeholder="Filter the steps (tool, path, text)…"></p>']
    for agent in view.agents:
        steps = [s for e in events if e.agent == agent and (s := _step(e)) is not None]
        a = view.agents[agent]
        summary = f"{escape(agent)} — {a.tool_calls} tool calls, {a.steps} model calls, {a.cost_text}"
        out.append(
            f'<details class="agent" id="agent-{escape(agent)}" open><summary>{summary}</summary>'
            + "".join(steps)
            + "</details>"
        )
    return "".join(out)
