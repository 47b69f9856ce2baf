"""`plait show`: a run's transcript as a person reads it, from the event log.

Events are told apart by their kind, so a log read without the models (`plait.ui._fast_events`) is shown alike; a
call's arguments are coloured by rich's JSON highlighter, which costs nothing to import, not by pygments. What is
drawn is described in `plait.ui._blocks`: rich draws it in a terminal, a plain page elsewhere, the same bytes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from plait.textsafe import visible
from plait.ui._blocks import Body, Diff, Framed, Line, Stack
from plait.ui._describe import describe
from plait.ui._plain import escape
from plait.ui.summary import summarize

if TYPE_CHECKING:
    from plait.events.types import Event
    from plait.ui._plain import Page
    from plait.ui.summary import RunSummary

Block = Line | Body | Framed | Stack

__all__ = ["render_transcript"]


def _clip(text: str, lines: int) -> str:
    rows = text.splitlines()
    if lines <= 0 or len(rows) <= lines:
        return text
    keep = max(lines // 2, 1)
    return "\n".join([*rows[:keep], f"… {len(rows) - 2 * keep} more lines …", *rows[-keep:]])


def _render_event(event: Event, max_lines: int) -> Block | None:
    """The event in `describe`'s words, led by who it is about; a prompt, a call's arguments and a result in full."""
    who = f"[cyan]{escape(event.agent)}[/] " if event.agent else ""
    if event.kind == "prompt":
        return Framed(escape(event.user), f"{who}task", "blue")
    if event.kind == "tool_call" and event.call.name == "answer" and event.call.arguments:
        return _answer(who, event.call.arguments)
    if event.kind == "tool_call":
        args = event.call.arguments
        shown = json.dumps(args, indent=2) if args is not None else f"malformed: {event.call.raw_arguments}"
        return Stack(
            Line(f"{who}[bold]→ {escape(event.call.name)}[/]"),
            Body(_clip(shown, max_lines), tab_size=4, json=True),  # laid out as rich's Syntax lays out code
        )
    if event.kind == "tool_result":
        style = "red" if event.is_error else "green"
        title = f"{escape(event.name)} {'error' if event.is_error else 'result'} ({event.duration_s:.1f}s)"
        return Framed(Body(_clip(event.output, max_lines)), title, style)
    if event.kind == "user_said":
        title = f"the user, {_USER_TOPICS[event.topic]} {event.turn}"
        return Framed(Body(event.text), title, "magenta")
    if event.kind == "note" or (event.kind == "policy" and event.verdict == "allow"):
        return None
    said = describe(event)
    if said is None:
        return None
    if event.kind == "model_response":  # the reply in full, below its figures
        text = event.response.text.strip()
        head = Line(said.head().markup())
        return Stack(head, Body(text, "italic")) if text else head
    line = Line(said.markup())
    if event.kind == "gate" and not event.passed and event.output:
        return Stack(line, Body(_clip(event.output, 12), "red"))
    return line


_USER_TOPICS = {"question": "question", "session": "message"}
"""What the user said to a lead (`plait ask`, `plait session`): what to call it."""


def _answer(who: str, arguments: dict[str, object]) -> Framed:
    """An `answer` call, in full: the answer that ended a turn is what the run was for."""
    parts = [str(arguments.get("answer", ""))]
    for key, value in arguments.items():
        if key != "answer" and value not in ("", [], None):
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            parts.append(f"\n{key.replace('_', ' ')}: {shown}")
    return Framed(Body("\n".join(parts)), f"{who}answer", "magenta")


def render_transcript(
    console: Page,
    run_id: str,
    events: list[Event],
    *,
    diff: str = "",
    agent: str | None = None,
    max_lines: int = 40,
    summary: RunSummary | None = None,
) -> None:
    """Print the transcript of a run (or of one agent), then its totals and the final diff.

    `events` are as `plait.ui.feed.redact_event` makes them (redacted, made visible); `diff` is made visible here;
    `summary` is the run's, when the caller has it already.
    """
    said: set[str] = set()  # what the user said to a lead, shown already: its first prompt repeats it
    shown: list[Block] = []
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
        console.print(Stack(*shown), soft_wrap=False)
    s = summarize(run_id, events) if summary is None else summary
    console.rule()
    console.print(
        f"{s.model_calls} model calls, {s.tool_calls} tool calls, {s.usage.input_tokens} tokens in "
        f"({s.usage.cached_tokens} cached), {s.usage.output_tokens} out, {s.cost_text}"
    )
    if diff:
        print_diff(console, visible(diff))


_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("+", "green"), ("-", "red"), ("@@", "cyan"), ("diff ", "bold"))


def print_diff(console: Page, diff: str) -> None:
    """A diff line for line as git printed it, coloured by its first characters: never wrapped, never cut."""
    lines = [(line, next((s for head, s in _DIFF_STYLES if line.startswith(head)), "")) for line in diff.splitlines()]
    console.print(Diff(lines), soft_wrap=True, highlight=False, end="")  # in one print, as git printed it
