"""What the views print, safe for the terminal: control characters shown as marks (`plait.textsafe`), and
text that rich reads as markup escaped, so that a model's `[link=...]` is shown, never drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from plait.textsafe import visible

if TYPE_CHECKING:  # `escaped` is used where no event is
    from plait.events.types import Event

__all__ = ["escaped", "safe_event", "visible"]


def escaped(text: str) -> str:
    """`text` made visible and escaped, for an f-string that rich reads as markup."""
    return escape(visible(text))


def safe_event(event: Event) -> Event:
    """The event with every string in it made visible."""
    from plait.events.store import rewrite_strings

    return rewrite_strings(event, visible)
