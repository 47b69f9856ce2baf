"""Events posted to a store: queued by the caller, written in order by a thread of the store's own.

An agent's events on the event loop (a call sent, a tool call and its result) need not hold up every other agent
on that loop while SQLite writes them: the agent posts its event and waits for it (`RunLog.append_async`), the
loop goes on, and the store's writer thread writes what is queued, several events in one transaction. An event is
acknowledged once written, as an append's is. An append of an agent writes first what that agent posted before,
and a read first what was posted before that it could see: an agent's events are in the log in the order it logged
them, and a part of the run reading the log finds there what it posted. Between agents the log's order is the
order the events were written.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from plait.events.types import Event

__all__ = ["PostQueue", "Posted", "Posting", "Then", "append_then", "failed", "post_to", "tell"]

Then = Callable[[Event | BaseException], None]
"""Told the event as it was stored (its sequence number set) once it is written, or why it could not be."""

Posted = tuple[Event, Then | None]


@runtime_checkable
class Posting(Protocol):
    """A store that takes posted events: written soon, in order, without the caller waiting for them."""

    def post(self, event: Event, then: Then | None = None) -> None:
        """Queue `event` to be written after everything its agent logged before it; `then` is told how it went."""
        ...


def post_to(store: object, event: Event, then: Then | None = None) -> None:
    """Post `event` to `store`, or append it there and then when the store takes no posts."""
    if isinstance(store, Posting):
        store.post(event, then)
    else:
        append_then(store.append, event, then)  # type: ignore[attr-defined]


def append_then(append: Callable[[Event], Event], event: Event, then: Then | None) -> None:
    """Append `event` now, and tell `then` how it went (raise when there is no `then` to tell a failure)."""
    try:
        stored = append(event)
    except Exception as exc:
        if then is None:
            raise
        then(exc)
        return
    if then is not None:
        then(stored)


def tell(written: Sequence[tuple[Event | BaseException, Then | None]]) -> None:
    """Tell each posted event's `then` how it went, in order."""
    for outcome, then in written:
        if then is not None:
            then(outcome)


def failed(taken: Sequence[Posted], error: BaseException) -> None:
    """Tell the posters of events that could not be written why."""
    tell([(error, then) for _, then in taken])


class PostQueue:
    """The events posted to one store and its writer thread, started at the first post and stopped by `close`.

    The writer thread takes the store's `lock` and writes what is queued with `write` (the store's: it returns the
    events as stored) whenever something was posted. At the interpreter's exit what is still queued is written.
    """

    def __init__(self, lock: threading.Lock, write: Callable[[list[Posted]], list[Posted]]) -> None:
        self._store_lock, self._write_taken = lock, write
        self._queued: deque[Posted] = deque()
        """Appended to without a lock (a deque's append is atomic), taken from under the store's lock only: a
        poster never waits for a thread that the machine paused while it held a lock."""
        self._lock = threading.Lock()
        self._wake = threading.Lock()
        """Held while nothing is queued: a post lets it go (never waiting), the writer thread waits to take it."""
        self._wake.acquire()
        self._thread: threading.Thread | None = None
        self._closed = False
        ref = weakref.ref(self)
        self._at_exit = lambda: _close(ref())
        atexit.register(self._at_exit)

    def put(self, event: Event, then: Then | None) -> None:
        """Queue a posted event and wake the writer thread."""
        self._queued.append((event, then))
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._closed:
                    self._thread = threading.Thread(target=self._write, name="plait event writer", daemon=True)
                    self._thread.start()
        try:
            self._wake.release()
        except RuntimeError:  # let go already: the writer thread will look at the queue
            return

    def take(self, run_id: str | None = None, agent: str | None = None, kinds: Sequence[str] = ()) -> list[Posted]:
        """The events queued, in order, to be written now (the store's lock held): all of them, or with `run_id`
        those of the run (and of `agent`), and only if one of them is of `kinds` (any kind when none is named): a
        read that cannot see any of them need not wait for them, and what one agent posted stays in order."""
        queued, taken = self._queued, []
        while queued:
            taken.append(queued.popleft())
        if run_id is None:
            return taken
        ours: list[Posted] = []
        others: list[Posted] = []
        for posted in taken:
            event = posted[0]
            (ours if event.run_id == run_id and agent in (None, event.agent) else others).append(posted)
        if not any(not kinds or e.kind in kinds for e, _ in ours):
            ours, others = [], taken
        queued.extendleft(reversed(others))  # before what was posted meanwhile
        return ours

    def _write(self) -> None:
        while not self._closed:
            self._wake.acquire()
            try:
                self._flush()
            except Exception:  # a listener's failure: it has no caller here, and the thread must go on writing
                continue

    def _flush(self) -> None:
        with self._store_lock:
            taken = self.take()
            written: Sequence[tuple[Event | BaseException, Then | None]]
            try:
                written = self._write_taken(taken)
            except Exception as exc:  # the posters waiting for these events are told why they were not written
                written = [(exc, then) for _, then in taken]
        tell(written)

    def close(self) -> None:
        """Stop the writer thread and write what is still queued."""
        atexit.unregister(self._at_exit)
        with self._lock:
            self._closed, thread = True, self._thread
        with contextlib.suppress(RuntimeError):
            self._wake.release()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._flush()


def _close(queue: PostQueue | None) -> None:
    if queue is not None:
        queue.close()
