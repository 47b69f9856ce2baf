"""Reading a run's events for display: incrementally, every secret redacted and every control character visible."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from plait.events.runlog import RunLog
from plait.events.store import rewrite_strings
from plait.events.types import Event
from plait.redact import Redactor
from plait.ui._safe import visible

if TYPE_CHECKING:  # the read-only commands show a log without the settings' models when nothing is set
    from plait.settings import Settings

__all__ = ["EventFeed", "make_redactor", "redact_event"]


def make_redactor(settings: Settings | None = None, extra: Iterable[str] = ()) -> Redactor:
    """A redactor for the environment's secrets, the configured API keys and `extra` values."""
    values = list(extra)
    if settings is not None:
        for key in (settings.openai_api_key, settings.anthropic_api_key):
            if key is not None:
                values.append(key.get_secret_value())
    return Redactor(values)


def redact_event(event: Event, redact: Redactor) -> Event:
    """The event as it may be shown: every string in it (output, arguments, text, settings) passed through
    `redact`, then its control characters made visible (see `plait.ui._safe`).

    Every view reads events through this (the feed, `show`, the report), so none can print a secret or let
    a model's or a command's text drive the terminal.
    """
    return rewrite_strings(event, lambda text: visible(redact(text)))


class EventFeed:
    """The events of one run, fetched in slices after the last one seen (the log may be written elsewhere)."""

    def __init__(self, log: RunLog | None, redact: Redactor | None = None) -> None:
        self.log = log
        """The run's log; None while the run has none yet."""
        self.redact = redact if redact is not None else Redactor()
        self.last_seq = 0

    def poll(self) -> list[Event]:
        """Events appended since the last poll, redacted and made visible; none while the run has no log yet."""
        if self.log is None:
            return []
        fresh = self.log.events(after=self.last_seq)
        if fresh:
            self.last_seq = fresh[-1].seq
        return [redact_event(e, self.redact) for e in fresh]
