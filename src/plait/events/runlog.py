"""One run's log: the handle a run's parts read and append its events through, over the store that keeps them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plait.events.store import EventStore
from plait.events.types import Event

__all__ = ["RunLog"]


@dataclass(frozen=True)
class RunLog:
    """The events of run `run_id` in `store`: what a run's parts are given instead of the store and the id."""

    store: EventStore
    run_id: str

    def append(self, event: Event) -> Event:
        """Store `event` (one of this run's) durably and return it with its sequence number set."""
        return self.store.append(event)

    def events(self, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0) -> list[Event]:
        """The run's events in order, optionally of one agent, some kinds, or after a sequence number."""
        return self.store.events(self.run_id, agent=agent, kinds=kinds, after=after)

    def put_blob(self, key: str, data: bytes) -> None:
        """Store bytes under `key` of the run, on disk before it returns; a key stored already keeps its bytes."""
        self.store.put_blob(self.run_id, key, data)

    def get_blob(self, key: str) -> bytes | None:
        """The bytes stored under `key` of the run, None when there are none."""
        return self.store.get_blob(self.run_id, key)
