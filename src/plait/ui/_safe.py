"""What the views print, safe for the terminal: control characters shown as marks (`plait.textsafe`), and
text that rich reads as markup escaped, so that a model's `[link=...]` is shown, never drawn."""

from __future__ import annotations

from rich.markup import escape

from plait.events.store import rewrite_strings
from plait.events.types import Event
from plait.textsafe import visible

__all__ = ["escaped", "safe_event", "visible"]


def escaped(text: str) -> str:
    """`text` made visible and escaped, for an f-string that rich reads as markup."""
    return escape(visible(text))


def safe_event(event: Event) -> Event:
    """The event with every string in it made visible."""
    return rewrite_strings(event, visible)
