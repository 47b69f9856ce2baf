"""Where a backend placed each agent's attempt (`plait status`), read from the workers' `AttemptPlaced` events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # told apart by their kind: a log read without the models is shown too
    from plait.events.types import Event

__all__ = ["placements"]


def placements(events: Iterable[Event]) -> dict[str, tuple[str, str]]:
    """Where each agent's latest attempt runs: agent id -> (node id, host name), for the attempts a backend placed."""
    found: dict[str, tuple[str, str]] = {}
    for event in events:
        if event.kind == "placed":
            found[event.agent] = (event.node, event.host)
    return found
