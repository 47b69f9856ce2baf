"""Where a backend placed each agent's attempt (`plait status`), read from the workers' `placed` decisions."""

from __future__ import annotations

from collections.abc import Iterable

from plait.events.types import Decision, Event

__all__ = ["placements"]


def placements(events: Iterable[Event]) -> dict[str, tuple[str, str]]:
    """Where each agent's latest attempt runs: agent id -> (node id, host name), for the attempts a backend placed."""
    found: dict[str, tuple[str, str]] = {}
    for event in events:
        if isinstance(event, Decision) and event.topic == "placed":
            found[event.agent] = (str(event.data.get("node", "")), str(event.data.get("host", "")))
    return found
