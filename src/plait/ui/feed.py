"""Reading a run's events for display: incrementally, and with every secret redacted first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plait.events.store import EventStore
from plait.events.types import Event, EventAdapter
from plait.redact import Redactor
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


def _scrub(value: Any, redact: Redactor) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _scrub(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, redact) for v in value]
    return value


def redact_event(event: Event, redact: Redactor) -> Event:
    """The event with every string in it (output, arguments, text, settings) passed through `redact`."""
    data = _scrub(event.model_dump(mode="json"), redact)
    return EventAdapter.validate_python(data)


class EventFeed:
    """The events of one run, fetched in slices after the last one seen (the store may be written elsewhere)."""

    def __init__(self, store: EventStore, run_id: str | None, redact: Redactor | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.redact = redact if redact is not None else Redactor()
        self.last_seq = 0

    def poll(self) -> list[Event]:
        """Events appended since the last poll, redacted; none while the run id is not known yet."""
        if self.run_id is None:
            return []
        fresh = self.store.events(self.run_id, after=self.last_seq)
        if fresh:
            self.last_seq = fresh[-1].seq
        return [redact_event(e, self.redact) for e in fresh]
