"""An event log as the contract tests see it: the store's setting, and its database behind the store's back."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plait.events.backends import open_event_store
from plait.events.store import EventStore


@dataclass
class Log:
    """One event log, and what a test does to it behind the store's back."""

    name: str
    location: str
    """The `store` setting that names it: empty for the SQLite file."""
    path: Path

    def open(self) -> EventStore:
        """A store on this log, as another process would open it."""
        return open_event_store(self.location, self.path)

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        """Run `query` on the log's database directly (`?` marks the arguments)."""
        if not self.location:
            with sqlite3.connect(self.path) as db:
                return db.execute(query, args).fetchall()
        import psycopg

        with psycopg.connect(self.location, autocommit=True) as conn:
            cur = conn.execute(query.replace("?", "%s"), args)
            return cur.fetchall() if cur.description else []

    def raw_event(self, run_id: str, payload: str) -> None:
        """An event row written by something other than plait."""
        table = "plait_events" if self.location else "events"
        self.sql(f"INSERT INTO {table} (run_id, agent, kind, ts, payload) VALUES (?, '', 'x', 0, ?)", run_id, payload)

    def meta(self) -> dict[str, str]:
        return dict(self.sql(f"SELECT key, value FROM {'plait_meta' if self.location else 'meta'}"))
