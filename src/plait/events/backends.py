"""Which store the `store` setting names, and what differs between stores for their readers.

The embedded default is the SQLite file in the repository's `.git/plait/`; a `postgresql://` URL names a server
(`plait.events.postgres`, imported only then, so that plait without it never loads psycopg).
"""

from __future__ import annotations

import time
from pathlib import Path

from plait.errors import EnvironmentProblem, UsageError
from plait.events.store import EventStore, SQLiteEventStore

__all__ = ["SERVER_SCHEMES", "open_event_store", "wait_for_news"]

SERVER_SCHEMES = ("postgresql://", "postgres://")


def open_event_store(location: str, default: Path, *, scope: str = "") -> EventStore:
    """The store at `location` (a `store` setting): the SQLite file `default` when empty, else the server it names.

    `scope` limits a server store's `run_ids` to one repository's runs (see `plait.workspace.scope`).
    """
    if not location:
        return SQLiteEventStore(default)
    if not location.startswith(SERVER_SCHEMES):
        raise UsageError("the store setting takes a postgresql:// URL, or nothing for the log in .git/plait")
    try:
        from plait.events.postgres import PostgresEventStore
    except ImportError as exc:
        raise EnvironmentProblem(
            f"a PostgreSQL event store needs psycopg ({exc.name} is missing): install plait with its postgres extra"
        ) from exc
    return PostgresEventStore(location, scope=scope)


def is_shared(store: EventStore) -> bool:
    """Whether `store` is a server's, which other machines read too (the SQLite file is this machine's alone)."""
    current: object = store
    while current is not None:
        if callable(getattr(current, "wait", None)):
            return True
        current = getattr(current, "inner", None)
    return False


def wait_for_news(store: EventStore, run_id: str, poll_s: float) -> None:
    """Return when `run_id` may have new events: a server store says so as they come (waiting at most a minute),
    others are read again after `poll_s` seconds."""
    current: object = store
    while current is not None:
        wait = getattr(current, "wait", None)
        if callable(wait):
            wait(run_id, 60.0)
            return
        current = getattr(current, "inner", None)
    time.sleep(poll_s)
