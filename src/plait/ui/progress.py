"""Plain progress lines, one per step, for a terminal that is not interactive (and for `--no-tui`)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.markup import escape

from plait.events.types import (
    AgentStopped,
    Committed,
    Decision,
    Event,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    RunFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.ui._safe import safe_event

__all__ = ["ProgressPrinter", "short_args"]


def short_args(arguments: dict[str, object] | None, raw: str = "", width: int = 90) -> str:
    """Tool arguments on one line, long values shortened."""
    if arguments is None:
        return f"<malformed JSON: {raw[:40]!r}>"
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        parts.append(f"{key}={text[:40] + '…' if len(text) > 40 else text}")
    line = " ".join(parts)
    return line if len(line) <= width else line[: width - 1] + "…"


class ProgressPrinter:
    """An event listener that prints what each agent does as it happens (as the log has it, made visible)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: Event) -> None:
        event = safe_event(event)
        who = f"[cyan]{escape(event.agent)}[/]" if event.agent else "[cyan]run[/]"
        out = self.console.print
        if isinstance(event, TaskStarted):
            out(f"{who} started on branch [bold]{escape(event.branch)}[/]")
        elif isinstance(event, ModelCallFinished):
            thought = event.response.text.strip().splitlines()[0] if event.response.text.strip() else ""
            usage = event.response.usage
            cost = f" ${event.cost_usd:.4f}" if event.cost_usd else ""
            out(f"{who} [dim]#{event.call} {usage.input_tokens}→{usage.output_tokens} tok{cost}[/] {escape(thought)}")
        elif isinstance(event, ModelCallRetried):
            reason = escape(event.reason)
            out(f"{who} [yellow]model call failed ({reason}); retry {event.attempt} in {event.wait_s:.1f}s[/]")
        elif isinstance(event, ModelCallFailed):
            out(f"{who} [red]model call failed: {escape(event.error)}[/]")
        elif isinstance(event, ToolCalled):
            args = short_args(event.call.arguments, event.call.raw_arguments)
            out(f"{who}   [bold]{escape(event.call.name)}[/] {escape(args)}")
        elif isinstance(event, ToolReturned) and event.is_error:
            first = event.output.strip().splitlines()[0] if event.output.strip() else ""
            out(f"{who}   [red]✗ {escape(first[:120])}[/]")
        elif isinstance(event, ToolReturned) and event.name == "run":
            first = event.output.strip().splitlines()[0] if event.output.strip() else ""
            last = event.output.strip().splitlines()[-1] if event.output.strip() else ""
            out(f"{who}   [dim]{escape(first)} … {escape(last[:100])}[/]")
        elif isinstance(event, AgentStopped):
            colour = "green" if event.reason == "finished" else "red"
            out(f"{who} [{colour}]stopped: {event.reason}[/] after {event.steps} model calls, ${event.cost_usd:.4f}")
        elif isinstance(event, Committed):
            out(f"{who} committed {event.sha[:10]} on {escape(event.branch)} ({len(event.files)} files)")
        elif isinstance(event, Decision) and event.topic != "notes":
            out(f"{who} [yellow]{escape(event.decision)}[/]")
        elif isinstance(event, RunFinished):
            colour = "green" if event.status == "done" else "red"
            out(f"{who} [{colour}]{event.status}[/] {escape(event.reason)}")
