"""Each event of an agent as a line or two of text: the live transcript and `plait log` use them.

The words are `describe`'s; a prompt and a tool's output are shown here, clipped, below their first line.
"""

from __future__ import annotations

from rich.text import Text

from plait.events.types import Event, PolicyDecided, PromptGiven, ToolReturned
from plait.ui._describe import describe

__all__ = ["transcript_lines"]

_OUTPUT_LINES = 8


def _clip(text: str, lines: int = _OUTPUT_LINES) -> str:
    rows = text.rstrip().splitlines()
    if len(rows) <= lines:
        return "\n".join(rows)
    return "\n".join([*rows[: lines - 1], f"… {len(rows) - lines + 1} more lines", rows[-1]])


def transcript_lines(event: Event) -> list[Text]:
    """How one event of an agent reads in its live transcript (nothing for the bookkeeping ones)."""
    if isinstance(event, PromptGiven):
        return [Text("task: ", style="bold blue") + Text(_clip(event.user, 6))]
    if isinstance(event, ToolReturned):
        style = "red" if event.is_error else "dim"
        body = _clip(event.output) or "(no output)"
        return [Text("  " + line, style=style) for line in body.splitlines()]
    said = None if isinstance(event, PolicyDecided) and event.verdict == "allow" else describe(event)
    return [] if said is None else [said.text()]
