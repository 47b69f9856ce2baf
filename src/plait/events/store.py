"""Where events live: the `EventStore` protocol and its embedded SQLite implementation."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from plait.errors import StateError
from plait.events._posting import Posted, PostQueue, Then, append_then, failed, post_to, tell
from plait.events._sqlite import PAID, SCHEMA, decode_payload, decode_rows, fsync, insert, insert_all, paid_rows
from plait.events._wal import wal_damage
from plait.events.types import Event, validate_event
from plait.log_upgrade import SCHEMA_VERSION, stored_kinds
from plait.messages import Usage
from plait.redact import Redactor, scrub_strings, strings_in

__all__ = [
    "DURABLE_KINDS",
    "IDENTITY",
    "EventStore",
    "ObservedStore",
    "RedactingStore",
    "SQLiteEventStore",
    "redaction",
    "rewrite_strings",
    "wal_damage",
]


class EventStore(Protocol):
    """An append-only, ordered log of events, shared by every agent of every run in a repository."""

    def append(self, event: Event) -> Event:
        """Store `event` durably and return it with its sequence number set."""
        ...

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        """Events of one run in order, optionally of one agent, some kinds, or after a sequence number."""
        ...

    def run_ids(self) -> list[str]:
        """Every run in the store, oldest first."""
        ...

    def put_blob(self, run_id: str, key: str, data: bytes) -> None:
        """Store bytes under `key` of run `run_id`, on disk before it returns; a key stored already keeps its bytes."""
        ...

    def get_blob(self, run_id: str, key: str) -> bytes | None:
        """The bytes stored under `key` of run `run_id`, None when there are none."""
        ...

    def close(self) -> None: ...


DURABLE_KINDS = frozenset({"model_response", "plan", "answer", "commit", "merge", "integrated"})
"""Events that must survive a power cut once appended: what a model or a person answered (paid for, or not to be
asked again) and what changed the repository. Appending one syncs the log to disk, and with it every event before."""

_SYNC_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")


class SQLiteEventStore:
    """Events in one SQLite file (WAL). Safe to share between threads and between processes.

    Every append survives a crash of plait. An event of the `durable` kinds (`DURABLE_KINDS`) also survives a
    crash of the machine: its commit is synced to disk before `append` returns, and `synced` is then its sequence
    number. The others are committed with `synchronous` (NORMAL: written, synced at the next sync), a power cut
    losing at most those after the last synced one.

    A durable event is committed like the others, then the write-ahead log is synced (as synchronous=FULL syncs it
    at the commit) after the store's lock is let go: a thread waiting for its answer to reach the disk holds up no
    other thread's append. Without a write-ahead log, the commit itself is made with synchronous=FULL.

    An event may be posted instead (`post`): queued, and written by the store's writer thread, or by the next
    append, or by a read that could see it (`plait.events._posting`).
    """

    def __init__(
        self, path: Path | str, *, synchronous: str = "NORMAL", durable: Collection[str] = DURABLE_KINDS
    ) -> None:
        self.path = Path(path)
        self._durable = frozenset(durable)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if synchronous.upper() not in _SYNC_MODES:
            raise ValueError(f"synchronous is one of {', '.join(_SYNC_MODES)}, not {synchronous!r}")
        self._synchronous = synchronous.upper()
        self._always_synced = _SYNC_MODES.index(self._synchronous) >= _SYNC_MODES.index("FULL")
        self.synced = 0
        """The last event known synced to disk: it and every event before it survive a power cut."""
        self._lock = threading.Lock()
        self._wal: Path | None = None
        """The write-ahead log a durable append syncs, None when the commit itself syncs."""
        self._wal_dir_synced = False
        self._posts = PostQueue(self._lock, self._written)
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() == "wal" and str(path) != ":memory:":
                self._wal = self.path.with_name(self.path.name + "-wal")
            self._db.execute(f"PRAGMA synchronous={self._synchronous}")
            self._db.executescript(SCHEMA)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as exc:
            raise StateError(
                f"the event log {self.path} is damaged ({exc}); move it aside to start a fresh log"
            ) from exc

    def append(self, event: Event) -> Event:
        durable = event.kind in self._durable and not self._always_synced
        sync = durable and self._wal is None
        with self._locked(event.run_id, event.agent):
            try:
                if sync:
                    self._db.execute("PRAGMA synchronous=FULL")
                try:
                    seq = insert(self._db, event)
                finally:
                    if sync:
                        self._db.execute(f"PRAGMA synchronous={self._synchronous}")
            except sqlite3.DatabaseError as exc:
                raise StateError(f"cannot write the event log {self.path}: {exc}") from exc
            if sync or self._always_synced:
                self.synced = seq
        if durable and not sync:
            self._sync_wal(seq)
        return event.model_copy(update={"seq": seq})

    def post(self, event: Event, then: Then | None = None) -> None:
        """Queue `event` for the store's writer thread (see `plait.events._posting`); a durable one is appended."""
        if event.kind in self._durable:
            return append_then(self.append, event, then)  # synced before `then` is told
        self._posts.put(event, then)

    @contextmanager
    def _locked(self, run_id: str | None = None, agent: str | None = None, kinds: Sequence[str] = ()) -> Iterator[None]:
        """The store's lock, taken once the posted events this write or read must come after are written (see
        `PostQueue.take`); their posters are told after the lock is let go, whatever happened under it."""
        written: list[Posted] = []
        try:
            with self._lock:
                written = self._written(self._posts.take(run_id, agent, kinds), raising=True)
                yield
        finally:
            tell(written)

    def _written(self, taken: list[Posted], *, raising: bool = False) -> list[Posted]:
        """Write events taken from the posted ones, in one transaction (the store's lock held): them as stored.
        A failure is raised, and told to their posters too when `raising` (the caller raises it: else it tells)."""
        if not taken:
            return []
        try:
            seqs = insert_all(self._db, [event for event, _ in taken])
        except sqlite3.DatabaseError as exc:
            error = StateError(f"cannot write the event log {self.path}: {exc}")
            if raising:
                failed(taken, error)
            raise error from exc
        if self._always_synced:
            self.synced = seqs[-1]
        return [(event.model_copy(update={"seq": seq}), then) for (event, then), seq in zip(taken, seqs, strict=True)]

    def _sync_wal(self, seq: int) -> None:
        """Sync the write-ahead log, which holds event `seq` and every event before it.

        Those a checkpoint has moved since into the database file are synced there: a checkpoint syncs the log
        before it copies, and the database file after.
        """
        self._sync_log()
        with self._lock:
            self.synced = max(self.synced, seq)

    def _sync_log(self) -> None:
        assert self._wal is not None
        try:
            fsync(self._wal)
            if not self._wal_dir_synced:  # the log's own entry in its directory, as SQLite syncs a log it made
                fsync(self._wal.parent)
                self._wal_dir_synced = True
        except OSError as exc:
            raise StateError(f"cannot sync the event log {self.path} to disk: {exc}") from exc

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        sql = "SELECT seq, kind, payload FROM events WHERE run_id = ? AND seq > ?"
        args: list[object] = [run_id, after]
        if agent is not None:
            sql += " AND agent = ?"
            args.append(agent)
        if kinds:
            stored = stored_kinds(kinds)
            sql += f" AND kind IN ({','.join('?' * len(stored))})"
            args.extend(stored)
        with self._locked(run_id, agent, kinds):
            try:
                rows = self._db.execute(sql + " ORDER BY seq", args).fetchall()
            except sqlite3.DatabaseError as exc:
                raise StateError(f"cannot read the event log {self.path}: {exc}") from exc
        return [e for e in decode_rows(self.path, rows) if not kinds or e.kind in kinds]

    def paid(self, run_id: str) -> dict[str, tuple[Usage, float]]:
        """What each agent of run `run_id` paid for its answered model calls, summed by the query, not decoded."""
        with self._locked(run_id, None, ("model_response",)):
            try:
                return paid_rows(self._db.execute(PAID, (run_id,)).fetchall())
            except sqlite3.DatabaseError as exc:
                raise StateError(f"cannot read the event log {self.path}: {exc}") from exc

    def run_ids(self) -> list[str]:
        with self._locked():
            try:
                rows = self._db.execute("SELECT run_id FROM events GROUP BY run_id ORDER BY MIN(seq)").fetchall()
            except sqlite3.DatabaseError as exc:
                raise StateError(f"cannot read the event log {self.path}: {exc}") from exc
        return [r[0] for r in rows]

    def put_blob(self, run_id: str, key: str, data: bytes) -> None:
        """Store `data` as a durable event is stored: committed, and synced to disk before this returns."""
        sync = self._wal is None and not self._always_synced
        with self._lock:
            try:
                if sync:
                    self._db.execute("PRAGMA synchronous=FULL")
                try:
                    self._db.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?)", (run_id, key, bytes(data)))
                finally:
                    if sync:
                        self._db.execute(f"PRAGMA synchronous={self._synchronous}")
            except sqlite3.DatabaseError as exc:
                raise StateError(f"cannot write the event log {self.path}: {exc}") from exc
        if self._wal is not None and not self._always_synced:
            self._sync_log()

    def get_blob(self, run_id: str, key: str) -> bytes | None:
        with self._lock:
            try:
                row = self._db.execute("SELECT data FROM blobs WHERE run_id = ? AND key = ?", (run_id, key)).fetchone()
            except sqlite3.DatabaseError as exc:
                raise StateError(f"cannot read the event log {self.path}: {exc}") from exc
        return None if row is None else bytes(row[0])

    def close(self) -> None:
        self._posts.close()
        with self._lock:
            self._db.close()

    def integrity(self) -> str:
        """SQLite's own check of the file: `ok`, or what is wrong."""
        with self._lock:
            try:
                return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                return str(exc)

    @staticmethod
    def decode(payload: str) -> Event:
        """One stored payload as an event; a `StateError` says what is wrong with it."""
        return decode_payload(payload)


class ObservedStore:
    """An `EventStore` that tells listeners (progress lines, the live view) of each event it appended."""

    def __init__(self, inner: EventStore, *listeners: Callable[[Event], None]) -> None:
        self.inner = inner
        self.listeners = list(listeners)

    def append(self, event: Event) -> Event:
        stored = self.inner.append(event)
        self._tell(stored)
        return stored

    def post(self, event: Event, then: Then | None = None) -> None:
        """Post `event` to the store inside; the listeners are told of it once it is written."""

        def told(outcome: Event | BaseException) -> None:
            try:
                if not isinstance(outcome, BaseException):
                    self._tell(outcome)
            finally:
                if then is not None:
                    then(outcome)

        post_to(self.inner, event, told)

    def _tell(self, stored: Event) -> None:
        for listener in self.listeners:
            listener(stored)

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        return self.inner.events(run_id, agent=agent, kinds=kinds, after=after)

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def put_blob(self, run_id: str, key: str, data: bytes) -> None:
        self.inner.put_blob(run_id, key, data)

    def get_blob(self, run_id: str, key: str) -> bytes | None:
        return self.inner.get_blob(run_id, key)

    def close(self) -> None:
        self.inner.close()


IDENTITY = ("v", "kind", "run_id", "agent")
"""What says which run, agent and kind an event is of: the log is queried by it."""


def rewrite_strings(event: Event, change: Callable[[str], str], *, keep: Sequence[str] = ("v", "kind")) -> Event:
    """The event with every string of its payload (text, arguments, output, settings...) passed through `change`.

    The fields named in `keep` stay as they are (`IDENTITY` keeps the run and agent an event is filed under).
    A string the format itself fixes (a stop reason, a merge outcome) is kept too when `change` turned it into
    something the format does not allow.
    """
    data = event.model_dump(mode="json")
    changed = scrub_strings(data, change)
    changed.update({k: data[k] for k in keep if k in data})
    if changed == data:
        return event
    try:
        return validate_event(changed)
    except ValidationError as exc:
        fields = {str(e["loc"][1]) for e in exc.errors() if len(e["loc"]) > 1}
        changed.update({k: data[k] for k in fields if k in data})
        return validate_event(changed)


def _unchanged(text: str) -> str:
    return text


class RedactingStore:
    """An `EventStore` that passes every string of an event through `redact` before the event is written.

    What the agents were told and answered is then only ever logged redacted: the task, the model's replies and
    tool calls, tool output, notes, summaries, errors, the settings of a run. `append` returns the event as it
    was written, so listeners of a store around this one see the redacted event too. Blobs (git bundles, binary)
    are stored as they are.
    """

    def __init__(self, inner: EventStore, redact: Callable[[str], str]) -> None:
        self.inner = inner
        self.redact = redact

    def append(self, event: Event) -> Event:
        return self.inner.append(self._redacted(event))

    def post(self, event: Event, then: Then | None = None) -> None:
        """Post `event`, redacted, to the store inside."""
        post_to(self.inner, self._redacted(event), then)

    def _redacted(self, event: Event) -> Event:
        if isinstance(self.redact, Redactor) and self.redact.finds_nothing(strings_in(event.model_dump(mode="json"))):
            return event  # most events hold no secret: one pass over all their text says so
        return rewrite_strings(event, self.redact, keep=IDENTITY)

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        return self.inner.events(run_id, agent=agent, kinds=kinds, after=after)

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def put_blob(self, run_id: str, key: str, data: bytes) -> None:
        self.inner.put_blob(run_id, key, data)

    def get_blob(self, run_id: str, key: str) -> bytes | None:
        return self.inner.get_blob(run_id, key)

    def close(self) -> None:
        self.inner.close()


def redaction(store: EventStore) -> Callable[[str], str]:
    """How `store`, or a store it wraps, redacts text before writing it; text is unchanged when none does.

    An agent passes what enters its conversation through the same function, so that what it was told and what
    the log says it was told are the same text, and a resumed agent asks what the first one asked.
    """
    current: object = store
    while current is not None:
        if isinstance(current, RedactingStore):
            return current.redact
        current = getattr(current, "inner", None)
    return _unchanged
