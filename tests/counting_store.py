"""An event store for tests that counts the events its reads hand back: each one is decoded from the log."""

from __future__ import annotations

from collections.abc import Sequence

from plait.events import SQLiteEventStore
from plait.events.types import Event


class CountingStore:
    """An EventStore that counts the events its reads hand back (each one decoded from the log)."""

    def __init__(self, inner: SQLiteEventStore) -> None:
        self.inner = inner
        self.decoded = 0

    def append(self, event: Event) -> Event:
        return self.inner.append(event)

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        found = self.inner.events(run_id, agent=agent, kinds=kinds, after=after)
        self.decoded += len(found)
        return found

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def put_blob(self, run_id: str, key: str, data: bytes) -> None:
        self.inner.put_blob(run_id, key, data)

    def get_blob(self, run_id: str, key: str) -> bytes | None:
        return self.inner.get_blob(run_id, key)

    def close(self) -> None:
        self.inner.close()
