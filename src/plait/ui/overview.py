"""A run in plain text: the status of every agent, the cost tables, and the short summary at the end of a run."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from plait.ui import _fmt
from plait.ui._expert_cost import COLUMNS_NOTE, saving_note, trade_line
from plait.ui._grid import Column, Grid
from plait.ui._plain import escape
from plait.ui.cost import CostBreakdown, CostLine, cost_breakdown
from plait.ui.runview import RunView

if TYPE_CHECKING:  # printed on a plain page when nothing is styled: rich's console and tables are not imported
    from plait.events.types import Event
    from plait.ui._plain import Page

__all__ = ["agents_table", "print_run_summary", "render_cost", "render_status"]


def agents_table(view: RunView) -> Grid:
    """One row per agent: task, state, the call in flight, steps, tokens, money, merge."""
    headers = ("agent", "task", "state", "now", "steps", "tokens", "cost", "merge")
    table = Grid(*(Column(h) for h in headers), boxed=False)
    for agent in view.agents.values():
        state = agent.state + (f" #{agent.attempt}" if agent.attempt > 1 else "")
        style = _fmt.STATE_STYLE.get(agent.state, "")
        table.add_row(
            escape(agent.id),
            escape(_fmt.one_line(agent.title, 32)),
            f"[{style}]{state}[/]" if style else state,
            escape(_fmt.one_line(agent.now, 40)),
            str(agent.steps),
            _fmt.tokens(agent.usage.total_tokens),
            agent.cost_text,
            escape(agent.merge),
        )
    return table


def _head(view: RunView, now: float) -> str:
    status, took = escape(view.status_text(now)), _fmt.duration(view.elapsed_s(now))
    return (
        f"[bold]run {escape(view.run_id)}[/] · {status} · {took} · {len(view.agents)} agents · "
        f"{_fmt.tokens(view.usage.total_tokens)} tokens · {view.cost_text}"
    )


def render_status(
    console: Page, view: RunView, *, now: float | None = None, placed: dict[str, tuple[str, str]] | None = None
) -> None:
    """What `plait status` prints when its output is not a terminal; `placed`: the node each agent runs on."""
    now = time.time() if now is None else now
    console.print(_head(view, now), highlight=False)
    if view.task:
        console.print(f"task: {escape(_fmt.one_line(view.task, 100))}", highlight=False)
    console.print(escape(_fmt.plan_line(view)), highlight=False)
    console.print(agents_table(view))
    if placed:
        where = ", ".join(f"{agent} on {host} (node {node[:12]})" for agent, (node, host) in sorted(placed.items()))
        console.print(f"placed: {escape(where)}", highlight=False)
    if view.merges:
        console.print("merge queue:", highlight=False)
        for step in view.merges[-8:]:
            files = ", ".join(step.files[:3])
            console.print(f"  {escape(step.task)} {step.rung} {step.outcome} {escape(files)}", highlight=False)
    console.print(escape(_fmt.gate_line(view)), highlight=False)
    console.print(escape(_fmt.integration_line(view)), highlight=False)
    if view.reason:
        console.print(f"reason: {escape(view.reason)}", highlight=False)


def _cost_table(title: str, lines: dict[str, CostLine], busy: dict[str, float] | None = None) -> Grid:
    headers = ("calls", "input", "cached", "output", "cost", "cache saved", *(("busy",) if busy is not None else ()))
    table = Grid(Column(title.split()[-1]), *(Column(h, "right") for h in headers), boxed=True, title=title)
    for line in lines.values():
        u = line.usage
        row = [escape(line.name), str(line.calls), _fmt.tokens(u.input_tokens), _fmt.tokens(u.cached_tokens)]
        row += [_fmt.tokens(u.output_tokens), _fmt.usd(line.cost_usd, calls=line.calls, unpriced=line.unpriced_calls)]
        row.append(_fmt.usd(line.saved_usd))
        if busy is not None:
            row.append(_fmt.duration(busy.get(line.name, 0.0)))
        table.add_row(*row)
    return table


def render_cost(console: Page, costs: CostBreakdown) -> None:
    """The cost tables and the parallel overhead, as `plait cost` prints them."""
    console.print(_cost_table("by agent", costs.by_agent, costs.busy_s))
    console.print(_cost_table("by model", costs.by_model))
    console.print(_cost_table("by phase", costs.by_phase))
    t = costs.total
    spent = _fmt.usd(t.cost_usd, calls=t.calls, unpriced=t.unpriced_calls)
    console.print(
        f"[bold]total[/] {spent} for {t.calls} model calls: {t.usage.input_tokens} tokens in "
        f"({t.usage.cached_tokens} cached, saving {_fmt.usd(t.saved_usd)}), {t.usage.output_tokens} out",
        highlight=False,
    )
    console.print(_time_line(costs), highlight=False)
    if costs.experts:
        console.print(_experts_table(costs))
        console.print(f"  ({COLUMNS_NOTE})", highlight=False)
        console.print(trade_line(costs.experts), highlight=False)
        console.print(f"  ({saving_note(costs.experts)})", highlight=False)


def _experts_table(costs: CostBreakdown) -> Grid:
    headers = ("questions", "from memory", "reads", "calls", "tokens", "cost", "saved reading (est.)")
    table = Grid(Column("expert"), *(Column(h, "right") for h in headers), boxed=True, title="by expert")
    for e in costs.experts:
        table.add_row(
            escape(e.name),
            f"{e.answered}/{e.questions}",
            str(e.from_memory),
            str(e.reads),
            str(e.calls),
            _fmt.tokens(e.spent_tokens),
            _fmt.usd(e.cost_usd),
            _fmt.tokens(e.saved_tokens),
        )
    return table


def _time_line(costs: CostBreakdown) -> str:
    """Wall time, and for a run that split a task, its speed-up over the same agents one after another."""
    if not costs.parallel:  # a lead and its investigators or helpers split no task: no speed-up to speak of
        return f"time: {_fmt.duration(costs.wall_s)} wall"
    return (
        f"time: {_fmt.duration(costs.wall_s)} wall against {_fmt.duration(costs.sequential_s)} for the same agents "
        f"one after another ({costs.speedup:.2f}× speed-up); no agent busy for {_fmt.duration(costs.idle_s)} "
        "(start-up, merging, the gate)"
    )


def print_run_summary(console: Page, events: list[Event]) -> None:
    """The short summary printed when a run ends: outcome, each agent, merges, gate, money and time."""
    if not events:
        return
    view = RunView.of(events[0].run_id, events)
    costs = cost_breakdown(events)
    colour = {"done": "green", "running": "cyan"}.get(view.status, "red")
    console.print(
        f"[{colour} bold]{view.status}[/] run {escape(view.run_id)} in {_fmt.duration(costs.wall_s)}", highlight=False
    )
    for agent in view.agents.values():
        tail = f" — {escape(_fmt.one_line(agent.summary or agent.reason, 60))}" if agent.summary or agent.reason else ""
        merge = f", {agent.merge}" if agent.merge else ""
        console.print(
            f"  {escape(agent.id)}: {agent.state}{merge}, {agent.steps} calls, {_fmt.usd(agent.cost_usd)}{tail}",
            highlight=False,
        )
    if costs.experts:
        console.print(f"  {trade_line(costs.experts)} (an estimate, see plait cost)", highlight=False)
    if view.merges or view.gates:
        conflicts = sum(1 for m in view.merges if m.outcome == "resolved")
        gate = escape(_fmt.gate_line(view))
        console.print(f"  merges: {len(view.merges)} steps, {conflicts} conflict(s) resolved; {gate}", highlight=False)
    if view.commit:
        console.print(f"  result: {escape(view.branch)} @ {view.commit[:10]}", highlight=False)
    t = costs.total
    console.print(
        f"  {t.calls} model calls, {_fmt.tokens(t.usage.total_tokens)} tokens "
        f"({_fmt.tokens(t.usage.cached_tokens)} cached), {_fmt.usd(t.cost_usd)}; {_time_line(costs)}",
        highlight=False,
    )
    rid = view.run_id
    console.print(f"  more: plait show {rid} · plait cost {rid} · plait report {rid} --html", highlight=False)
