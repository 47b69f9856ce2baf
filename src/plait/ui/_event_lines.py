"""Each event of an agent as a line or two of text: the live transcript and `plait log` use them."""

from __future__ import annotations

from rich.text import Text

from plait.events.types import (
    AgentStopped,
    Committed,
    Decision,
    Event,
    MergeStep,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    NotePosted,
    PromptGiven,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.ui import _fmt
from plait.ui.progress import short_args

__all__ = ["transcript_lines"]

_OUTPUT_LINES = 8


def _clip(text: str, lines: int = _OUTPUT_LINES) -> str:
    rows = text.rstrip().splitlines()
    if len(rows) <= lines:
        return "\n".join(rows)
    return "\n".join([*rows[: lines - 1], f"… {len(rows) - lines + 1} more lines", rows[-1]])


def _task_lines(event: Event) -> list[Text] | None:
    if isinstance(event, TaskStarted):
        return [Text(f"— attempt {event.attempt} on branch {event.branch}", style="bold")]
    if isinstance(event, PromptGiven):
        return [Text("task: ", style="bold blue") + Text(_clip(event.user, 6))]
    if isinstance(event, AgentStopped):
        return [Text(f"stopped: {event.reason} after {event.steps} calls, {_fmt.usd(event.cost_usd)}", style="bold")]
    if isinstance(event, Committed):
        return [Text(f"committed {event.sha[:10]}: {', '.join(event.files[:8])}", style="green")]
    if isinstance(event, TaskFinished):
        style = "green" if event.status == "done" else "red"
        return [Text(f"task {event.status}: {event.summary or event.reason}", style=f"bold {style}")]
    if isinstance(event, MergeStep):
        return [
            Text(f"merge {event.rung}: {event.outcome} {', '.join(event.files[:4])} {event.detail}", style="magenta")
        ]
    if isinstance(event, Decision) and event.topic == "lease":
        return [_lease_line(event)]
    if isinstance(event, Decision):
        return [Text(f"decision ({event.topic}): {event.decision}", style="yellow")]
    if isinstance(event, NotePosted):
        return [Text(f"note ({event.topic}): {event.text}", style="yellow")]
    return None


_LEASE_STYLE = {"claim": "green", "wait": "yellow", "refuse": "red", "cycle": "bold red", "update": "cyan"}


def _lease_line(event: Decision) -> Text:
    """A claim, wait, refusal, broken cycle, release or merge of integrated work, as one readable line."""
    data = event.data
    action, path, holder = str(data.get("action", "")), data.get("path", ""), data.get("holder", "")
    why = f" ({data['why']})" if data.get("why") and action in ("claim", "wait", "refuse") else ""
    if action == "claim" and data.get("after"):
        text = f"claimed {path} after waiting for {', '.join(data['after'])}{why}"
    elif action == "wait":
        text = f"waits for {holder} to finish with {path}{why}"
    elif action == "refuse":
        waited = float(data.get("waited") or 0)
        text = f"refused {path}{why}: held by {holder}" + (f", after waiting {waited:.0f}s" if waited else "")
    elif action == "cycle":
        text = f"refused {path}: waiting for {holder} would close the cycle {' → '.join(data.get('cycle', []))}"
    else:
        text = event.decision + (why if action == "claim" else "")
    return Text("lease: ", style="bold") + Text(text, style=_LEASE_STYLE.get(action, "dim"))


def transcript_lines(event: Event) -> list[Text]:
    """How one event of an agent reads in its live transcript (nothing for the bookkeeping ones)."""
    lines = _task_lines(event)
    if lines is not None:
        return lines
    if isinstance(event, ModelCallFinished):
        u = event.response.usage
        head = Text(
            f"#{event.call} {_fmt.tokens(u.input_tokens)}→{_fmt.tokens(u.output_tokens)} tok "
            f"{_fmt.usd(event.cost_usd)} {event.duration_s:.1f}s ",
            style="dim",
        )
        return [head + Text(_fmt.one_line(event.response.text, 100), style="italic")]
    if isinstance(event, ModelCallRetried):
        return [Text(f"retry {event.attempt} in {event.wait_s:.1f}s: {event.reason}", style="yellow")]
    if isinstance(event, ModelCallFailed):
        return [Text(f"model call {event.call} failed: {event.error}", style="red")]
    if isinstance(event, ToolCalled):
        args = short_args(event.call.arguments, event.call.raw_arguments, 110)
        return [Text("→ ", style="bold") + Text(event.call.name, style="bold cyan") + Text(f" {args}")]
    if isinstance(event, ToolReturned):
        style = "red" if event.is_error else "dim"
        body = _clip(event.output) or "(no output)"
        return [Text("  " + line, style=style) for line in body.splitlines()]
    return []
