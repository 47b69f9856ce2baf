"""The SQLite event log's own parts: its tables, events written as rows and read back, a file synced to disk."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from plait.errors import StateError
from plait.events.types import BY_KIND, Event, validate_event
from plait.log_upgrade import SCHEMA_VERSION, upgrade
from plait.messages import Usage

__all__ = [
    "PAID",
    "PAID_FIELDS",
    "SCHEMA",
    "decode_payload",
    "decode_rows",
    "fsync",
    "insert",
    "insert_all",
    "paid_rows",
]

# seq is the rowid: one past the highest, so never reused while no event is deleted, and none is. AUTOINCREMENT
# (logs made before kept it) wrote a third page, its counter's, with every append.
SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL,
    ts REAL NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_run ON events (run_id, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (run_id, key)
);
"""
"""The log's tables: its events, numbered in the order they were committed, its schema version, its blobs."""


PAID_FIELDS = tuple(Usage.model_fields)
"""The token counts of an answer's usage, summed by the stores' queries of what a run paid (`paid_rows`)."""

_SUMS = ", ".join(f"SUM(json_extract(payload, '$.response.usage.{f}'))" for f in PAID_FIELDS)
PAID = (
    f"SELECT agent, {_SUMS}, SUM(json_extract(payload, '$.cost_usd')) FROM events"
    " WHERE run_id = ? AND kind = 'model_response' GROUP BY agent"
)
"""What each agent of a run (the one argument) paid for its answered calls, summed from its answers' JSON."""


def paid_rows(rows: Iterable[tuple[Any, ...]]) -> dict[str, tuple[Usage, float]]:
    """What each agent paid, from rows of (agent, each of `PAID_FIELDS`' sums, the dollars' sum), by agent."""
    return {
        agent: (Usage(**{f: int(n or 0) for f, n in zip(PAID_FIELDS, sums[:-1], strict=True)}), float(sums[-1] or 0))
        for agent, *sums in rows
    }


def decode_payload(payload: str) -> Event:
    """One stored payload as an event; a `StateError` says what is wrong with it."""
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise StateError(f"an event is not valid JSON ({exc.msg})") from exc
    try:
        return validate_event(upgrade(data))
    except ValidationError as exc:
        raise StateError(f"an event is malformed: {exc.errors()[0]['msg']}") from exc


def decode_rows(where: object, rows: Iterable[tuple[Any, ...]]) -> Iterable[Event]:
    """The events of rows (sequence number, kind, payload) read from the log at `where` (a SQLite file, a PostgreSQL
    database: it names the log in errors), upgraded to this schema.

    A row of this schema is parsed and checked by its kind's model in one pass over its JSON; any other row (an
    older or newer schema, a kind or payload that does not fit) is read the long way, which upgrades an old event
    and words what is wrong with a bad one.
    """
    for seq, kind, payload in rows:
        model = BY_KIND.get(kind)
        try:
            event = model.model_validate_json(payload) if model is not None else None
        except ValueError:  # a ValidationError, or text that is not JSON: the long way says which
            event = None
        if event is None or event.v != SCHEMA_VERSION or "v" not in event.__pydantic_fields_set__:
            yield _decoded(where, seq, payload)
            continue
        object.__setattr__(event, "seq", seq)  # the store's number, not in the payload; set before anyone sees it
        event.__pydantic_fields_set__.add("seq")
        yield cast("Event", event)


def _decoded(where: object, seq: int, payload: str) -> Event:
    """The event of one row, its JSON upgraded from the schema it was written in; a `StateError` says what is wrong."""
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise StateError(f"event {seq} in {where} is not valid JSON ({exc.msg})") from exc
    version = data.get("v", 0) if isinstance(data, dict) else 0
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise StateError(f"event {seq} in {where} was written by a newer plait (schema {version}); upgrade plait")
    data = upgrade(data)
    if isinstance(data, dict):
        data["seq"] = seq
    try:
        return validate_event(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise StateError(f"event {seq} in {where} is malformed at {at}: {first['msg']}") from exc


def fsync(path: Path) -> None:
    """Sync the file or directory at `path` to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def insert(db: sqlite3.Connection, event: Event) -> int:
    """Insert `event` as a row (its payload without its sequence number); returns the number it was given."""
    cur = db.execute(
        "INSERT INTO events (run_id, agent, kind, ts, payload) VALUES (?, ?, ?, ?, ?)",
        (event.run_id, event.agent, event.kind, event.ts, event.model_dump_json(exclude={"seq"})),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def insert_all(db: sqlite3.Connection, events: list[Event]) -> list[int]:
    """Insert `events` in one transaction, all of them or none; returns the numbers they were given."""
    db.execute("BEGIN IMMEDIATE")
    try:
        seqs = [insert(db, event) for event in events]
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return seqs
