"""A plan shown to people (`render_plan`, for --review and the run's output) and to agents (`describe_plan`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from plait.plan.overlap import OverlapDecision
from plait.plan_model import Plan

__all__ = ["describe_plan", "render_plan"]

_WRITES_SHOWN = 4


def _writes(patterns: list[str]) -> str:
    shown = ", ".join(patterns[:_WRITES_SHOWN])
    more = len(patterns) - _WRITES_SHOWN
    return shown + (f" (+{more} more)" if more > 0 else "") if patterns else "-"


def render_plan(plan: Plan, decisions: Sequence[OverlapDecision] = ()) -> RenderableType:
    """The plan as a table of tasks, its contracts, and the overlap decisions with their reasons."""
    parts: list[RenderableType] = [
        Text.from_markup(f"[bold]Plan[/]: {plan.mode}, {len(plan.tasks)} task(s). {escape(plan.reason)}")
    ]
    table = Table(show_lines=False, expand=False, pad_edge=False)
    for column in ("task", "title", "writes", "after"):
        table.add_column(column, overflow="fold")
    for task in plan.tasks:
        table.add_row(
            f"[cyan]{escape(task.id)}[/]" + (" [dim](contract)[/]" if task.kind == "contract" else ""),
            escape(task.title),
            escape(_writes(task.writes)),
            escape(", ".join(task.depends_on) or "-"),
        )
    parts.append(table)
    if plan.contracts:
        parts.append(Text.from_markup("[bold]Contracts[/]"))
        for contract in plan.contracts:
            where = f" in {contract.path}" if contract.path else ""
            owner = f" (by {contract.owner})" if contract.owner else ""
            parts.append(Text(f"  {contract.name}{owner}{where}: {contract.signature}"))
    if decisions:
        parts.append(Text.from_markup("[bold]Overlaps resolved[/]"))
        for decision in decisions:
            parts.append(
                Text.from_markup(
                    f"  [yellow]{decision.action}[/] {escape(decision.what)} [dim]({escape(decision.why)})[/]"
                )
            )
    return Group(*parts)


def describe_plan(plan: Plan) -> str:
    """The plan as plain text for an agent's prompt: every task's title, write-set and dependencies, and contracts.

    Task instructions are left out: each agent gets only its own.
    """
    lines = [f"Mode: {plan.mode}. {plan.reason.strip()}", "", "Tasks:"]
    for task in plan.tasks:
        kind = " (writes a contract stub)" if task.kind == "contract" else ""
        lines.append(f"- {task.id}{kind}: {task.title.strip()}")
        lines.append(f"  writes: {', '.join(task.writes) or 'nothing'}")
        if task.depends_on:
            lines.append(f"  after: {', '.join(task.depends_on)}")
        if task.provides:
            lines.append(f"  provides: {', '.join(task.provides)}")
        if task.consumes:
            lines.append(f"  consumes: {', '.join(task.consumes)}")
    if plan.contracts:
        lines += ["", "Contracts (interfaces tasks agree on; code against them exactly):"]
        for contract in plan.contracts:
            where = f" in {contract.path}" if contract.path else ""
            owner = f", implemented by {contract.owner}" if contract.owner else ""
            lines.append(f"- {contract.name}{where}{owner}:")
            lines.extend(f"    {line}" for line in contract.signature.strip().splitlines())
    return "\n".join(lines) + "\n"
