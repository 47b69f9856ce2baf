"""`plait log`: each event on one line of plain text, in `describe`'s words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.ui import _fmt
from plait.ui._describe import describe

if TYPE_CHECKING:  # `plait log` words events read without the models too
    from plait.events.types import Event

__all__ = ["log_line"]


def log_line(event: Event, start: float) -> str:
    """`seq +time agent kind detail`, the detail on one line."""
    said = describe(event)
    detail = _fmt.one_line(said.plain if said is not None else "", 160)
    return f"{event.seq:>6} {event.ts - start:>+9.2f}s {event.agent or '-':<16} {event.kind:<14} {detail}".rstrip()
