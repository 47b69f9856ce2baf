"""One driver per run: a lease row in the event store, renewed by a heartbeat, taken over when its holder died.

`Lease` keeps it in the SQLite file; a PostgreSQL store gives its own (`PostgresEventStore.lease`).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import Protocol

from plait.errors import StateError
from plait.events.store import SQLiteEventStore

__all__ = ["Lease", "RunLease", "lease_for"]


class RunLease(Protocol):
    """The right to drive one run, held by one process at a time."""

    def acquire(self) -> str:
        """Take it, or raise `StateError` naming the live holder; returns a note when a dead holder's was taken over."""
        ...

    def beat(self) -> None:
        """Tell that the holder still lives (every few seconds)."""
        ...

    def release(self) -> None: ...


def lease_for(store: object, run_id: str) -> RunLease:
    """The lease on `run_id` in `store`, also through the stores wrapping it (`ObservedStore`, `RedactingStore`)."""
    current = store
    while current is not None:
        if isinstance(current, SQLiteEventStore):
            return Lease(current.path, run_id)
        lease = getattr(current, "lease", None)
        if callable(lease):
            held: RunLease = lease(run_id)
            return held
        current = getattr(current, "inner", None)
    raise TypeError(f"{type(store).__name__} keeps no runs' leases")


_SCHEMA = """
CREATE TABLE IF NOT EXISTS leases (
    run_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    acquired REAL NOT NULL,
    heartbeat REAL NOT NULL
);
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Lease:
    """Holds run `run_id` for this process; `acquire` refuses a run another live process drives."""

    def __init__(self, db_path: Path, run_id: str, *, stale_after: float = 30.0) -> None:
        self.path, self.run_id, self.stale_after = db_path, run_id, stale_after
        self.pid, self.host = os.getpid(), socket.gethostname()
        self.holder = f"pid {self.pid} on {self.host}"
        self._db = sqlite3.connect(str(db_path), isolation_level=None, timeout=30, check_same_thread=False)
        self._db.executescript(_SCHEMA)

    def acquire(self) -> str:
        """Take the lease; returns a note when it was taken over from a dead holder, else ''."""
        now = time.time()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute(
                "SELECT holder, pid, host, heartbeat FROM leases WHERE run_id = ?", (self.run_id,)
            ).fetchone()
            note = ""
            if row is not None and (row[1], row[2]) != (self.pid, self.host):
                holder, pid, host, beat = row
                dead = (host == self.host and not _alive(pid)) or now - beat > self.stale_after
                if not dead:
                    raise StateError(
                        f"run {self.run_id} is driven by {holder} (heartbeat {now - beat:.0f}s ago): "
                        "wait for it to finish, or stop that process first"
                    )
                note = f"took over run {self.run_id} from {holder}, which is gone"
            self._db.execute(
                "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?)",
                (self.run_id, self.holder, self.pid, self.host, now, now),
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return note

    def beat(self) -> None:
        self._db.execute(
            "UPDATE leases SET heartbeat = ? WHERE run_id = ? AND pid = ? AND host = ?",
            (time.time(), self.run_id, self.pid, self.host),
        )

    def release(self) -> None:
        self._db.execute(
            "DELETE FROM leases WHERE run_id = ? AND pid = ? AND host = ?", (self.run_id, self.pid, self.host)
        )
        self._db.close()
