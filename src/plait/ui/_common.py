"""What the commands share: the consoles, opening a repository's event log, and a run's log as a run writes it.

The consoles, the log and naming a run are `plait.ui._reading`'s, which the read-only commands use without typer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.ui._reading import console, err, has_log, open_store, out, resolve_run

if TYPE_CHECKING:  # the event log and the settings are imported where used: `plait --help` needs neither
    from plait.events.store import EventStore, ObservedStore
    from plait.events.types import Event
    from plait.settings import Settings

__all__ = [
    "console",
    "err",
    "has_log",
    "open_store",
    "out",
    "provider_failure",
    "resolve_run",
    "run_store",
]


def run_store(store: EventStore, settings: Settings | None) -> ObservedStore:
    """`store` as a run writes to it: each event redacted (the environment's and the settings' secrets) before
    it is written, then told to the listeners (progress lines)."""
    from plait.events.store import ObservedStore, RedactingStore
    from plait.ui.feed import make_redactor

    return ObservedStore(RedactingStore(store, make_redactor(settings)))


def provider_failure(events: list[Event]) -> str:
    """The provider's one-line error when a run got no answer from it and every agent stopped on its error
    (a rejected key, an unknown model): such a run exits as a model provider problem, not a failed task."""
    from plait.events.types import AgentStopped, ModelCallFailed, ModelCallFinished

    stops = [e for e in events if isinstance(e, AgentStopped)]
    if not stops or any(e.reason != "model_error" for e in stops):
        return ""
    if any(isinstance(e, ModelCallFinished) for e in events):
        return ""
    failed = [e.error for e in events if isinstance(e, ModelCallFailed)] or [stops[-1].summary]
    lines = failed[-1].strip().splitlines()
    return lines[0] if lines else "the model provider failed"
