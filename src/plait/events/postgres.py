"""Events in PostgreSQL: what the SQLite log keeps, on a server that processes on many machines share.

Needs psycopg 3 (the `postgres` extra); nothing imports this module unless the `store` setting names a server.
A row holds what a row of the SQLite file holds (the payload is the JSON of the typed event, with its schema
version); the guarantees are kept this way:

- order: a trigger numbers each event while it holds a lock on the event's run until the insert commits, so a
  reader asking for a run's events after number N never misses one that commits later with a smaller number;
- durability: each append is a transaction of its own, committed with `synchronous_commit = on`: once `append`
  returns, the server has the event on its disk (an answered model call is there before its tool calls run);
- news: the trigger also sends `NOTIFY plait_events, 'RUN'`, so a follower waits instead of polling;
- one driver per run: `PostgresLease`, an advisory lock that the server drops when its holder's connection ends;
- blobs (checkpoint bundles any machine must reach) are rows of `plait_blobs`, committed as events are;
- the tables' layout is versioned in `plait_meta`, and an older database is brought up to date when opened.
"""

from __future__ import annotations

import threading
import time
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus

from plait.errors import StateError
from plait.events._pg_lease import PostgresLease
from plait.events._sqlite import PAID_FIELDS, decode_rows, paid_rows
from plait.events.store import SQLiteEventStore
from plait.events.types import Event
from plait.log_upgrade import SCHEMA_VERSION, stored_kinds
from plait.messages import Usage
from plait.redact import Redactor

__all__ = ["LAYOUT", "PostgresEventStore", "PostgresLease"]

Connection = psycopg.Connection[tuple[Any, ...]]

LAYOUT = 2
"""Version of the tables: `_MIGRATIONS[n]` brings a database from layout n to n + 1 (layout 0 has no tables)."""

_ORDER_LOCK = 0x706C6169
"""Advisory-lock class of "one appender of a run at a time" (the key is the run id's hash)."""
_MIGRATION_LOCK = 0x706C616D
_CHANNEL = "plait_events"

_MIGRATIONS = [
    f"""
CREATE TABLE plait_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE plait_events (
    seq BIGINT PRIMARY KEY,
    run_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    kind TEXT NOT NULL,
    ts DOUBLE PRECISION NOT NULL,
    payload TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT '',
    token UUID UNIQUE
);
CREATE SEQUENCE plait_events_seq OWNED BY plait_events.seq;
CREATE INDEX plait_events_run ON plait_events (run_id, seq);
CREATE TABLE plait_leases (
    run_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    acquired DOUBLE PRECISION NOT NULL,
    heartbeat DOUBLE PRECISION NOT NULL
);
CREATE FUNCTION plait_event_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({_ORDER_LOCK}, hashtext(NEW.run_id));
    NEW.seq := nextval('plait_events_seq');
    PERFORM pg_notify('{_CHANNEL}', NEW.run_id);
    RETURN NEW;
END $$;
CREATE TRIGGER plait_event_order BEFORE INSERT ON plait_events
    FOR EACH ROW EXECUTE FUNCTION plait_event_order();
""",
    """
CREATE TABLE plait_blobs (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (run_id, key)
);
""",
]

_INSERT = (
    "INSERT INTO plait_events (run_id, agent, kind, ts, payload, scope, token) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING seq"
)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _shown(params: dict[str, Any]) -> str:
    """The database as a person recognises it, without its password: `postgresql://USER@HOST:PORT/DB`."""
    user = f"{params['user']}@" if params.get("user") else ""
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{user}{params.get('host', '')}{port}/{params.get('dbname', '')}"


def _close_all(*groups: list[Connection]) -> None:
    for group in groups:
        while group:
            group.pop().close()


def _layout(conn: Connection) -> int:
    found = conn.execute("SELECT to_regclass('plait_meta') IS NOT NULL").fetchone()
    row = conn.execute("SELECT value FROM plait_meta WHERE key = 'layout'").fetchone() if found and found[0] else None
    return int(row[0]) if row is not None else 0


def _migrate(conn: Connection, where: str) -> None:
    """Bring the tables to `LAYOUT`, one process at a time; a database from a newer plait is refused."""
    if _layout(conn) == LAYOUT:
        return
    # a session lock taken before the transaction, so that the transaction sees what the previous holder made
    conn.execute("SELECT pg_advisory_lock(%s, 0)", (_MIGRATION_LOCK,))
    try:
        with conn.transaction():
            layout = _layout(conn)
            if layout > LAYOUT:
                raise StateError(
                    f"the event log {where} was laid out by a newer plait (layout {layout}); upgrade plait"
                )
            for step in _MIGRATIONS[layout:]:
                conn.execute(step)
            conn.execute(
                "INSERT INTO plait_meta VALUES ('schema_version', %s) ON CONFLICT DO NOTHING", (str(SCHEMA_VERSION),)
            )
            conn.execute(
                "INSERT INTO plait_meta VALUES ('layout', %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (str(LAYOUT),),
            )
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s, 0)", (_MIGRATION_LOCK,))


class PostgresEventStore:
    """Events in a PostgreSQL database, shared by threads, processes and machines.

    `scope` names the repository the runs are of (its first commit, the same in every clone): `run_ids` lists
    that repository's runs only, so one database can serve many repositories. Each call takes a connection of
    its own from a small pool.
    """

    decode = staticmethod(SQLiteEventStore.decode)

    def __init__(self, url: str, *, scope: str = "", connections: int = 8) -> None:
        self.url, self.scope = url, scope
        try:
            params = conninfo_to_dict(url)
        except psycopg.Error as exc:
            said = Redactor(env={})(_one_line(exc))
            raise StateError(f"the store setting is not a PostgreSQL URL libpq can read: {said}") from None
        self.where = _shown(params)
        self._redact = Redactor([str(params["password"])] if params.get("password") else [], env={})
        self._options: dict[str, Any] = {} if "connect_timeout" in params else {"connect_timeout": 10}
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(connections)
        self._listening: list[Connection] = []
        self._closer = weakref.finalize(self, _close_all, self._idle, self._listening)
        try:
            with self._connection() as conn:
                _migrate(conn, self.where)
        except psycopg.Error as exc:
            raise self.error("set up", exc) from exc

    def error(self, doing: str, exc: BaseException) -> StateError:
        """`exc` as a one-line `StateError` that names the database, never its password."""
        return StateError(f"cannot {doing} the event log {self.where}: {self._redact(_one_line(exc))}")

    def connect(self) -> Connection:
        """A new connection in autocommit mode, whose every commit waits for the server's disk."""
        try:
            conn: Connection = psycopg.connect(self.url, autocommit=True, **self._options)
            conn.execute("SET synchronous_commit = on")
        except psycopg.Error as exc:
            raise self.error("reach", exc) from None  # the chained error's text may quote the URL
        return conn

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        with self._slots:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None or conn.closed:
                conn = self.connect()
            try:
                yield conn
            finally:
                if conn.closed or conn.broken or conn.info.transaction_status != TransactionStatus.IDLE:
                    conn.close()
                else:
                    with self._lock:
                        self._idle.append(conn)

    def _read(self, query: str, args: Sequence[object], *, retry: bool = True) -> list[tuple[Any, ...]]:
        try:
            with self._connection() as conn:
                return conn.execute(query, args).fetchall()
        except psycopg.OperationalError as exc:  # a broken connection (a restarted server): once more on a new one
            if retry:
                return self._read(query, args, retry=False)
            raise self.error("read", exc) from exc
        except psycopg.Error as exc:
            raise self.error("read", exc) from exc

    def _insert(self, row: tuple[object, ...], *, again: bool = False) -> int:
        with self._connection() as conn:
            found = None
            if again:  # the connection broke during the first try, which may have committed: its token says
                found = conn.execute("SELECT seq FROM plait_events WHERE token = %s", (row[-1],)).fetchone()
            found = found or conn.execute(_INSERT, row).fetchone()
        assert found is not None
        return int(found[0])

    def append(self, event: Event) -> Event:
        payload = event.model_dump_json(exclude={"seq"})
        row = (event.run_id, event.agent, event.kind, event.ts, payload, self.scope, uuid.uuid4())
        try:
            try:
                seq = self._insert(row)
            except psycopg.OperationalError:
                seq = self._insert(row, again=True)
        except psycopg.Error as exc:
            raise self.error("write", exc) from exc
        return event.model_copy(update={"seq": seq})

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        query = "SELECT seq, kind, payload FROM plait_events WHERE run_id = %s AND seq > %s"
        args: list[object] = [run_id, after]
        if agent is not None:
            query += " AND agent = %s"
            args.append(agent)
        if kinds:
            query += " AND kind = ANY(%s)"
            args.append(stored_kinds(kinds))
        return [
            e
            for e in decode_rows(self.where, self._read(query + " ORDER BY seq", args))
            if not kinds or e.kind in kinds
        ]

    def paid(self, run_id: str) -> dict[str, tuple[Usage, float]]:
        """What each agent of run `run_id` paid for its answered model calls, summed by the query, not decoded."""
        sums = ", ".join(f"SUM((payload::jsonb #>> '{{response,usage,{f}}}')::bigint)" for f in PAID_FIELDS)
        query = f"SELECT agent, {sums}, SUM((payload::jsonb ->> 'cost_usd')::float8) FROM plait_events"
        return paid_rows(self._read(query + " WHERE run_id = %s AND kind = 'model_response' GROUP BY agent", [run_id]))

    def run_ids(self) -> list[str]:
        where, args = ("WHERE scope = %s", [self.scope]) if self.scope else ("", [])
        rows = self._read(f"SELECT run_id FROM plait_events {where} GROUP BY run_id ORDER BY MIN(seq)", args)
        return [r[0] for r in rows]

    def put_blob(self, run_id: str, key: str, data: bytes) -> None:
        """Store `data`, committed to the server's disk when this returns; tried again once on a broken connection."""
        row = (run_id, key, bytes(data))
        for again in (False, True):
            try:
                with self._connection() as conn:
                    conn.execute(
                        "INSERT INTO plait_blobs (run_id, key, data) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", row
                    )
                return
            except psycopg.OperationalError as exc:  # the insert may have committed: doing it again is harmless
                if again:
                    raise self.error("write", exc) from exc
            except psycopg.Error as exc:
                raise self.error("write", exc) from exc

    def get_blob(self, run_id: str, key: str) -> bytes | None:
        rows = self._read("SELECT data FROM plait_blobs WHERE run_id = %s AND key = %s", [run_id, key])
        return bytes(rows[0][0]) if rows else None

    def integrity(self) -> str:
        """`ok`, or what is wrong: tables of another layout, the trigger that orders a run's events gone."""
        try:
            meta = dict(self._read("SELECT key, value FROM plait_meta", []))
            trigger = self._read(
                "SELECT tgenabled FROM pg_trigger WHERE tgrelid = 'plait_events'::regclass "
                "AND tgname = 'plait_event_order'",
                [],
            )
        except StateError as exc:
            return str(exc)
        if meta.get("layout") != str(LAYOUT):
            return f"the tables are at layout {meta.get('layout')}, this plait reads layout {LAYOUT}"
        if int(meta.get("schema_version", "0")) > SCHEMA_VERSION:
            return f"its events are of schema {meta['schema_version']}, written by a newer plait; upgrade plait"
        if not trigger or trigger[0][0] == "D":
            return "the trigger that numbers each run's events in order is missing or disabled"
        return "ok"

    def wait(self, run_id: str, timeout: float) -> None:
        """Return when an event of `run_id` may have been appended since the previous call, at most after `timeout`.

        The first call starts listening and returns at once (the caller reads, then waits); later ones return on
        the server's notice of an append to the run. A broken connection returns too, to be reopened next time.
        """
        try:
            if not self._listening or self._listening[0].closed:
                self._listening[:] = [self.connect()]
                self._listening[0].execute(f"LISTEN {_CHANNEL}")
                return
            listener = self._listening[0]
            deadline = time.monotonic() + timeout
            news = False
            while not news and (left := deadline - time.monotonic()) > 0:
                news = any(n.payload == run_id for n in listener.notifies(timeout=left, stop_after=1))
            for _ in listener.notifies(timeout=0):  # the rest queued already tells the same
                pass
        except (psycopg.Error, StateError):
            _close_all(self._listening)

    def lease(self, run_id: str) -> PostgresLease:
        """The lease on `run_id` for this process (not taken yet: `acquire` it)."""
        return PostgresLease(self, run_id)

    def close(self) -> None:
        self._closer()
