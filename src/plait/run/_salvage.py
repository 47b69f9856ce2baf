"""Reading what still reads of a damaged SQLite event log, event by event.

A file cut short loses its last page, and SQLite then refuses the whole table as malformed; padded back to the
length its header gives, every page before the cut reads again. A damaged page in the middle stops a scan of the
table, so the scan resumes past it, looking rows up one by one until one reads. The blobs (checkpoints and
bundles a run keeps beside its events) are read the same way, by rowid.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from plait.errors import StateError
from plait.events.store import SQLiteEventStore

Row = tuple[int, str, str, str, float, str]
Blob = tuple[str, str, bytes]

_COLUMNS = "SELECT seq, run_id, agent, kind, ts, payload FROM events"
_BLOBS = "SELECT rowid, run_id, key, data FROM blobs"


def _pad(path: Path) -> None:
    """Lengthen a cut-short database file with zeros to the page count in its header."""
    with path.open("r+b") as f:
        header = f.read(100)
        if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
            return
        page = int.from_bytes(header[16:18], "big")
        page = 65536 if page == 1 else page
        if page < 512 or page & (page - 1):
            return
        size = f.seek(0, 2)
        pages = -(-size // page)
        if header[24:28] == header[92:96]:  # the page count is valid only then
            pages = max(pages, int.from_bytes(header[28:32], "big"))
        if pages * page > size:
            f.truncate(pages * page)


def _readable(row: tuple[object, ...]) -> Row | None:
    seq, run_id, agent, kind, ts, payload = row
    if not (isinstance(seq, int) and isinstance(payload, str) and isinstance(ts, float | int)):
        return None
    if not (isinstance(run_id, str) and isinstance(agent, str) and isinstance(kind, str)):
        return None
    try:
        SQLiteEventStore.decode(payload)
    except StateError:
        return None
    return seq, run_id, agent, kind, float(ts), payload


def _last_seq(db: sqlite3.Connection) -> int:
    """The highest sequence number the log gave, as far as it can still tell."""
    last = 0
    for query in ("SELECT seq FROM sqlite_sequence WHERE name = 'events'", "SELECT MAX(seq) FROM events"):
        try:
            found = db.execute(query).fetchone()
        except sqlite3.DatabaseError:
            continue
        if found and isinstance(found[0], int):
            last = max(last, found[0])
    return last


def _rows(
    db: sqlite3.Connection, last: int, columns: str = _COLUMNS, key: str = "seq"
) -> Iterator[tuple[int, tuple[object, ...] | None]]:
    """(key, raw row) of every row up to `last` and beyond, in order; the row is None where it does not read."""
    after = 0
    while True:
        try:
            for row in db.execute(f"{columns} WHERE {key} > ? ORDER BY {key}", (after,)):
                after = row[0]
                yield after, row
            return
        except sqlite3.DatabaseError:
            pass
        while True:  # past the damage: look rows up one by one until one reads
            after += 1
            if after > last:
                return
            try:
                row = db.execute(f"{columns} WHERE {key} = ?", (after,)).fetchone()
            except sqlite3.DatabaseError:
                yield after, None
                continue
            yield after, row
            if row is not None:
                break


def _blobs(db: sqlite3.Connection) -> Iterator[Blob]:
    """Every blob that still reads (none when the log has no blobs table, or it does not read at all)."""
    try:
        found = db.execute("SELECT MAX(rowid) FROM blobs").fetchone()
        last = found[0] if found and isinstance(found[0], int) else 0
    except sqlite3.DatabaseError:
        last = 1 << 20  # the table's end does not read: look rows up one by one, as far as a large run's blobs go
    try:
        for _, row in _rows(db, last, _BLOBS, "rowid"):
            if row is not None and isinstance(row[1], str) and isinstance(row[2], str) and isinstance(row[3], bytes):
                yield row[1], row[2], row[3]
    except sqlite3.OperationalError:  # no blobs table: a log written before blobs, or one it was cut from
        return


def salvage_rows(
    damaged: Path, keep: Callable[[Row], object], keep_blob: Callable[[Blob], object] | None = None
) -> tuple[int, int]:
    """Pass every event of the log `damaged` that reads to `keep`, and every blob that reads to `keep_blob`:
    (events kept, events the log held).

    `damaged` is not changed: a copy of it (and of its write-ahead file) is padded and read.
    """
    kept = total = 0
    with tempfile.TemporaryDirectory(dir=damaged.parent) as tmp:
        work = Path(tmp) / "events.db"
        shutil.copyfile(damaged, work)
        wal = damaged.with_name(damaged.name + "-wal")
        if wal.exists():
            shutil.copyfile(wal, work.with_name("events.db-wal"))
        _pad(work)
        db = sqlite3.connect(work)
        try:
            last = _last_seq(db)
            for seq, raw in _rows(db, last):
                total = max(total, seq)
                row = None if raw is None else _readable(raw)
                if row is not None:
                    keep(row)
                    kept += 1
            total = max(total, last)
            if keep_blob is not None:
                for blob in _blobs(db):
                    keep_blob(blob)
        finally:
            db.close()
    return kept, total
