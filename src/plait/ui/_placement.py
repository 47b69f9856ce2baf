"""Where a backend placed each agent's attempt (`plait status`), read from the workers' `AttemptPlaced` events."""

from __future__ import annotations

from collections.abc import Iterable

from plait.events.types import AttemptPlaced, Event

__all__ = ["placements"]


def placements(events: Iterable[Event]) -> dict[str, tuple[str, str]]:
    """Where each agent's latest attempt runs: agent id -> (node id, host name), for the attempts a backend placed."""
    found: dict[str, tuple[str, str]] = {}
    for event in events:
        if isinstance(event, AttemptPlaced):
            found[event.agent] = (event.node, event.host)
    return found
