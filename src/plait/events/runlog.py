"""One run's log: the handle a run's parts read and append its events through, over the store that keeps them."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plait.events._posting import post_to
from plait.events.store import EventStore
from plait.events.types import Event, ModelCallFinished
from plait.messages import Usage

if TYPE_CHECKING:
    import asyncio

__all__ = ["RunLog"]


@dataclass(frozen=True)
class RunLog:
    """The events of run `run_id` in `store`: what a run's parts are given instead of the store and the id."""

    store: EventStore
    run_id: str

    def append(self, event: Event) -> Event:
        """Store `event` (one of this run's) durably and return it with its sequence number set."""
        return self.store.append(event)

    async def append_async(self, event: Event) -> Event:
        """Store `event` as `append` does, from the store's writer thread when it has one: the calling task waits
        for it, the event loop goes on (every agent on it would wait for an append made on it)."""
        import asyncio  # here: the read-only commands that read a log never start an event loop

        loop = asyncio.get_running_loop()
        done: asyncio.Future[Event] = loop.create_future()

        def then(outcome: Event | BaseException) -> None:
            if threading.get_ident() == loop_thread:
                _settle(done, outcome)
            elif not loop.is_closed():
                loop.call_soon_threadsafe(_settle, done, outcome)

        loop_thread = threading.get_ident()
        post_to(self.store, event, then)
        return await done

    def events(self, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0) -> list[Event]:
        """The run's events in order, optionally of one agent, some kinds, or after a sequence number."""
        return self.store.events(self.run_id, agent=agent, kinds=kinds, after=after)

    def paid(self) -> dict[str, tuple[Usage, float]]:
        """What each agent of the run paid for its answered model calls (tokens, dollars), by agent: summed by the
        store's own query where it has one (SQLite, PostgreSQL, under the stores that wrap them), which decodes no
        answer; else from the answers read."""
        store: object = self.store
        while store is not None:
            if (summed := getattr(store, "paid", None)) is not None:
                return dict(summed(self.run_id))
            store = getattr(store, "inner", None)
        paid: dict[str, tuple[Usage, float]] = {}
        for e in self.events(kinds=["model_response"]):
            if isinstance(e, ModelCallFinished):
                usage, usd = paid.get(e.agent, (Usage(), 0.0))
                paid[e.agent] = (usage + e.response.usage, usd + e.cost_usd)
        return paid

    def put_blob(self, key: str, data: bytes) -> None:
        """Store bytes under `key` of the run, on disk before it returns; a key stored already keeps its bytes."""
        self.store.put_blob(self.run_id, key, data)

    def get_blob(self, key: str) -> bytes | None:
        """The bytes stored under `key` of the run, None when there are none."""
        return self.store.get_blob(self.run_id, key)


def _settle(done: asyncio.Future[Event], outcome: Event | BaseException) -> None:
    if done.cancelled():
        return
    if isinstance(outcome, BaseException):
        done.set_exception(outcome)
    else:
        done.set_result(outcome)
