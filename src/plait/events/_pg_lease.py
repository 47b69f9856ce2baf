"""The run lease in PostgreSQL: a session advisory lock, which the server drops when its holder's connection ends."""

from __future__ import annotations

import hashlib
import os
import socket
import time
from typing import TYPE_CHECKING, Any

import psycopg

from plait.errors import StateError

if TYPE_CHECKING:
    from plait.events.postgres import PostgresEventStore

__all__ = ["PostgresLease"]

Connection = psycopg.Connection[tuple[Any, ...]]


class PostgresLease:
    """Holds run `run_id` for this process: a session advisory lock on a connection of its own, which the server
    drops as soon as that connection ends (the process exited or was killed), and a row saying who holds it.

    A holder on another machine that vanished without closing its connection is noticed by the server's
    keepalives in about 30 seconds; the lease can then be taken over.
    """

    def __init__(self, store: PostgresEventStore, run_id: str) -> None:
        self.store, self.run_id = store, run_id
        self.holder = f"pid {os.getpid()} on {socket.gethostname()}"
        digest = hashlib.sha256(b"plait run lease\0" + run_id.encode()).digest()
        self._key = int.from_bytes(digest[:8], "big", signed=True)
        self._conn: Connection | None = None
        self._held = False

    def acquire(self) -> str:
        """Take the lease; returns a note when it was taken over from a holder that is gone, else ''."""
        if self._conn is None or self._conn.closed:
            self._conn = self.store.connect()
        conn = self._conn
        try:
            conn.execute(
                "SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3; "
                "SET tcp_user_timeout = 30000"
            )
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()
            row = conn.execute(
                "SELECT holder, heartbeat FROM plait_leases WHERE run_id = %s", (self.run_id,)
            ).fetchone()
            if not (got and got[0]):
                conn.close()
                held = f"{row[0]} (heartbeat {time.time() - row[1]:.0f}s ago)" if row else "another process"
                raise StateError(
                    f"run {self.run_id} is driven by {held}: wait for it to finish, or stop that process first"
                )
            now = time.time()
            conn.execute(
                "INSERT INTO plait_leases VALUES (%s, %s, %s, %s) ON CONFLICT (run_id) DO UPDATE "
                "SET holder = EXCLUDED.holder, acquired = EXCLUDED.acquired, heartbeat = EXCLUDED.heartbeat",
                (self.run_id, self.holder, now, now),
            )
        except psycopg.Error as exc:
            conn.close()
            raise self.store.error("take the lease of a run in", exc) from exc
        self._held = True
        return f"took over run {self.run_id} from {row[0]}, which is gone" if row and row[0] != self.holder else ""

    def beat(self) -> None:
        """Renew the heartbeat; a connection that broke (its lock went with it) is reopened and the lock retaken."""
        if not self._held:
            return
        try:
            if self._conn is not None and not self._conn.closed:
                self._conn.execute(
                    "UPDATE plait_leases SET heartbeat = %s WHERE run_id = %s AND holder = %s",
                    (time.time(), self.run_id, self.holder),
                )
                return
        except psycopg.Error:
            if self._conn is not None and not self._conn.broken:
                return
        try:
            self.acquire()
        except StateError:  # the server is away, or another process took the run: the next beat tries again
            if self._conn is not None:
                self._conn.close()

    def release(self) -> None:
        self._held = False
        if self._conn is None:
            return
        try:
            self._conn.execute("DELETE FROM plait_leases WHERE run_id = %s AND holder = %s", (self.run_id, self.holder))
        except psycopg.Error:
            pass  # the lock goes with the connection anyway
        finally:
            self._conn.close()
            self._conn = None
