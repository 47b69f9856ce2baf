"""`plait show`: a run's transcript as a person reads it, from the event log."""

from __future__ import annotations

import json

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from plait.events.types import (
    AgentStopped,
    Committed,
    Decision,
    Event,
    GateChecked,
    Integrated,
    MergeStep,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    PlanMade,
    PolicyDecided,
    PromptGiven,
    RunFinished,
    RunStarted,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.ui._safe import visible
from plait.ui.summary import summarize

__all__ = ["render_transcript"]


def _clip(text: str, lines: int) -> str:
    rows = text.splitlines()
    if lines <= 0 or len(rows) <= lines:
        return text
    keep = max(lines // 2, 1)
    return "\n".join([*rows[:keep], f"… {len(rows) - 2 * keep} more lines …", *rows[-keep:]])


def _render_event(event: Event, max_lines: int) -> RenderableType | None:
    who = f"[cyan]{escape(event.agent)}[/] " if event.agent else ""
    if isinstance(event, RunStarted):
        return Text.from_markup(
            f"[bold]Run {escape(event.run_id)}[/] on {escape(event.repo)} from {escape(event.base_ref)} "
            f"@ {event.base_commit[:10]}{' (snapshot)' if event.snapshot else ''}, model {escape(event.model)}"
        )
    if isinstance(event, TaskStarted):
        return Text.from_markup(f"{who}works on branch [bold]{escape(event.branch)}[/]")
    if isinstance(event, PromptGiven):
        return Panel(escape(event.user), title=f"{who}task", title_align="left", border_style="blue")
    if isinstance(event, ModelCallFinished):
        u = event.response.usage
        head = (
            f"{who}[dim]model call {event.call}: {u.input_tokens} in ({u.cached_tokens} cached), "
            f"{u.output_tokens} out, ${event.cost_usd:.4f}, {event.duration_s:.1f}s[/]"
        )
        text = event.response.text.strip()
        return Group(Text.from_markup(head), Text(text, style="italic")) if text else Text.from_markup(head)
    if isinstance(event, ModelCallRetried):
        return Text.from_markup(f"{who}[yellow]retry {event.attempt} in {event.wait_s:.1f}s: {escape(event.reason)}[/]")
    if isinstance(event, ModelCallFailed):
        return Text.from_markup(f"{who}[red]model call {event.call} failed: {escape(event.error)}[/]")
    if isinstance(event, ToolCalled) and event.call.name == "answer" and event.call.arguments:
        return _answer(who, event.call.arguments)
    if isinstance(event, ToolCalled):
        args = event.call.arguments
        shown = json.dumps(args, indent=2) if args is not None else f"malformed: {event.call.raw_arguments}"
        return Group(
            Text.from_markup(f"{who}[bold]→ {escape(event.call.name)}[/]"),
            Syntax(_clip(shown, max_lines), "json", theme="ansi_dark", word_wrap=True),
        )
    if isinstance(event, ToolReturned):
        style = "red" if event.is_error else "green"
        return Panel(
            Text(_clip(event.output, max_lines)),
            title=f"{escape(event.name)} {'error' if event.is_error else 'result'} ({event.duration_s:.1f}s)",
            title_align="left",
            border_style=style,
        )
    if isinstance(event, Decision) and event.topic in _USER_TOPICS and "text" in event.data:
        title = f"the user, {_USER_TOPICS[event.topic]} {event.data.get('turn', '')}".rstrip()
        return Panel(Text(str(event.data["text"])), title=title, title_align="left", border_style="magenta")
    if isinstance(event, Decision):
        return Text.from_markup(f"{who}[yellow]decision ({escape(event.topic)}): {escape(event.decision)}[/]")
    if isinstance(event, AgentStopped):
        return Text.from_markup(f"{who}[bold]stopped: {event.reason}[/] {escape(event.summary)}")
    if isinstance(event, Committed):
        files = ", ".join(event.files[:12]) + (" …" if len(event.files) > 12 else "")
        return Text.from_markup(f"{who}committed [bold]{event.sha[:10]}[/] on {escape(event.branch)}: {escape(files)}")
    if isinstance(event, RunFinished):
        return Text.from_markup(f"[bold]Run {event.status}[/] {escape(event.reason)}")
    return _render_reconciliation(event)


_USER_TOPICS = {"question": "question", "session": "message"}
"""Decisions that log what the user said to a lead (`plait ask`, `plait session`), and what to call it."""


def _answer(who: str, arguments: dict[str, object]) -> RenderableType:
    """An `answer` call, in full: the answer that ended a turn is what the run was for."""
    parts = [str(arguments.get("answer", ""))]
    for key, value in arguments.items():
        if key != "answer" and value not in ("", [], None):
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            parts.append(f"\n{key.replace('_', ' ')}: {shown}")
    return Panel(Text("\n".join(parts)), title=f"{who}answer", title_align="left", border_style="magenta")


def _render_reconciliation(event: Event) -> RenderableType | None:
    """The plan, merges, the gate and the integration branch, one line each."""
    if isinstance(event, PlanMade):
        tasks = event.plan.get("tasks", [])
        ids = ", ".join(str(t.get("id")) for t in tasks if isinstance(t, dict))
        return Text.from_markup(f"[bold]plan[/] ({event.source}, {event.plan.get('mode', '')}): {escape(ids)}")
    if isinstance(event, MergeStep):
        colour = {"clean": "green", "resolved": "green", "conflict": "yellow"}.get(event.outcome, "red")
        files = f" {', '.join(event.files[:6])}" if event.files else ""
        return Text.from_markup(
            f"[bold]merge[/] {escape(event.task)}: [{colour}]{event.rung} {event.outcome}[/]{escape(files)}"
            f" [dim]{escape(event.detail)}[/]"
        )
    if isinstance(event, GateChecked):
        verdict = "[green]passed[/]" if event.passed else "[red]failed[/]"
        head = Text.from_markup(
            f"[bold]gate[/] {event.stage} {verdict} @ {event.commit[:10]} ({event.duration_s:.1f}s)"
        )
        return head if event.passed or not event.output else Group(head, Text(_clip(event.output, 12), style="red"))
    if isinstance(event, Integrated):
        if event.ejected:
            return Text.from_markup(f"[red]ejected {escape(', '.join(event.ejected))}[/]: {escape(event.reason)}")
        return Text.from_markup(f"[bold]integrated[/] {escape(', '.join(event.tasks))} → {event.commit[:10]}")
    if isinstance(event, PolicyDecided) and event.verdict != "allow":
        return Text.from_markup(
            f"[cyan]{escape(event.agent)}[/] [red]policy {event.verdict}[/] {event.action} {escape(event.subject[:80])}"
        )
    return None


def render_transcript(
    console: Console, run_id: str, events: list[Event], *, diff: str = "", agent: str | None = None, max_lines: int = 40
) -> None:
    """Print the transcript of a run (or of one agent), then its totals and the final diff.

    `events` are as `plait.ui.feed.redact_event` makes them (redacted, made visible); `diff` is made visible here.
    """
    said: set[str] = set()  # what the user said to a lead, shown already: its first prompt repeats it
    for event in events:
        if agent is not None and event.agent not in ("", agent):
            continue
        if isinstance(event, Decision) and event.topic in _USER_TOPICS:
            said.add(str(event.data.get("text", "")))
        if isinstance(event, PromptGiven) and event.user in said:
            continue
        shown = _render_event(event, max_lines)
        if shown is not None:
            console.print(shown, soft_wrap=False)  # soft wrapping would crop the text inside panels
    s = summarize(run_id, events)
    console.rule()
    console.print(
        f"{s.model_calls} model calls, {s.tool_calls} tool calls, {s.usage.input_tokens} tokens in "
        f"({s.usage.cached_tokens} cached), {s.usage.output_tokens} out, {s.cost_text}"
    )
    if diff:
        print_diff(console, visible(diff))


_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("+", "green"), ("-", "red"), ("@@", "cyan"), ("diff ", "bold"))


def print_diff(console: Console, diff: str) -> None:
    """A diff line for line as git printed it, coloured by its first characters: never wrapped, never cut."""
    for line in diff.splitlines():
        style = next((s for head, s in _DIFF_STYLES if line.startswith(head)), "")
        console.print(Text(line, style=style), soft_wrap=True, highlight=False)
