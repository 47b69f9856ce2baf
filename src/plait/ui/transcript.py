"""`plait show`: a run's transcript as a person reads it, from the event log.

Events are told apart by their kind, so a log read without the models (`plait.ui._fast_events`) is shown alike; a
call's arguments are coloured by rich's JSON highlighter, which costs nothing to import, not by pygments.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.console import Console, Group, RenderableType
from rich.highlighter import JSONHighlighter
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from plait.textsafe import visible
from plait.ui._describe import describe
from plait.ui.summary import summarize

if TYPE_CHECKING:
    from plait.events.types import Event

__all__ = ["render_transcript"]


def _clip(text: str, lines: int) -> str:
    rows = text.splitlines()
    if lines <= 0 or len(rows) <= lines:
        return text
    keep = max(lines // 2, 1)
    return "\n".join([*rows[:keep], f"… {len(rows) - 2 * keep} more lines …", *rows[-keep:]])


def _render_event(event: Event, max_lines: int) -> RenderableType | None:
    """The event in `describe`'s words, led by who it is about; a prompt, a call's arguments and a result in full."""
    who = f"[cyan]{escape(event.agent)}[/] " if event.agent else ""
    if event.kind == "prompt":
        return Panel(escape(event.user), title=f"{who}task", title_align="left", border_style="blue")
    if event.kind == "tool_call" and event.call.name == "answer" and event.call.arguments:
        return _answer(who, event.call.arguments)
    if event.kind == "tool_call":
        args = event.call.arguments
        shown = json.dumps(args, indent=2) if args is not None else f"malformed: {event.call.raw_arguments}"
        return Group(
            Text.from_markup(f"{who}[bold]→ {escape(event.call.name)}[/]"),
            JSONHighlighter()(Text(_clip(shown, max_lines), tab_size=4)),  # laid out as rich's Syntax lays out code
        )
    if event.kind == "tool_result":
        style = "red" if event.is_error else "green"
        return Panel(
            Text(_clip(event.output, max_lines)),
            title=f"{escape(event.name)} {'error' if event.is_error else 'result'} ({event.duration_s:.1f}s)",
            title_align="left",
            border_style=style,
        )
    if event.kind == "user_said":
        title = f"the user, {_USER_TOPICS[event.topic]} {event.turn}"
        return Panel(Text(event.text), title=title, title_align="left", border_style="magenta")
    if event.kind == "note" or (event.kind == "policy" and event.verdict == "allow"):
        return None
    said = describe(event)
    if said is None:
        return None
    if event.kind == "model_response":  # the reply in full, below its figures
        text = event.response.text.strip()
        head = Text.from_markup(said.head().markup())
        return Group(head, Text(text, style="italic")) if text else head
    line = Text.from_markup(said.markup())
    if event.kind == "gate" and not event.passed and event.output:
        return Group(line, Text(_clip(event.output, 12), style="red"))
    return line


_USER_TOPICS = {"question": "question", "session": "message"}
"""What the user said to a lead (`plait ask`, `plait session`): what to call it."""


def _answer(who: str, arguments: dict[str, object]) -> RenderableType:
    """An `answer` call, in full: the answer that ended a turn is what the run was for."""
    parts = [str(arguments.get("answer", ""))]
    for key, value in arguments.items():
        if key != "answer" and value not in ("", [], None):
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            parts.append(f"\n{key.replace('_', ' ')}: {shown}")
    return Panel(Text("\n".join(parts)), title=f"{who}answer", title_align="left", border_style="magenta")


def render_transcript(
    console: Console, run_id: str, events: list[Event], *, diff: str = "", agent: str | None = None, max_lines: int = 40
) -> None:
    """Print the transcript of a run (or of one agent), then its totals and the final diff.

    `events` are as `plait.ui.feed.redact_event` makes them (redacted, made visible); `diff` is made visible here.
    """
    said: set[str] = set()  # what the user said to a lead, shown already: its first prompt repeats it
    shown: list[RenderableType] = []
    for event in events:
        if agent is not None and event.agent not in ("", agent):
            continue
        if event.kind == "user_said":
            said.add(event.text)
        if event.kind == "prompt" and event.user in said:
            continue
        if (drawn := _render_event(event, max_lines)) is not None:
            shown.append(drawn)
    if shown:  # in one print, which costs far less than one each; soft wrapping would crop the text inside panels
        console.print(Group(*shown), soft_wrap=False)
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
    text = Text()
    for line in diff.splitlines():
        text.append(line, style=next((s for head, s in _DIFF_STYLES if line.startswith(head)), ""))
        text.append("\n")
    console.print(text, soft_wrap=True, highlight=False, end="")  # in one print, as git printed it
