"""What one append writes to the SQLite log: counted in the pages of its write-ahead file, not timed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from plait.events import SQLiteEventStore, ToolCalled
from plait.messages import ToolCall

FRAME = 24 + 4096


def _call(n: int) -> ToolCalled:
    return ToolCalled(run_id="r", agent="a", call=ToolCall.parse(f"c{n}", "read_file", {"path": "src/m.py"}))


def test_an_append_writes_the_event_and_its_index_entry_and_nothing_more(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    store = SQLiteEventStore(path)
    store.append(_call(0))
    wal = path.with_name("events.db-wal")
    before = wal.stat().st_size
    for n in range(1, 101):
        store.append(_call(n))
    frames = (wal.stat().st_size - before) / FRAME
    store.close()
    assert frames < 2.5 * 100  # a leaf of the table, one of the index, and now and then a new page (3.1 before)


def test_a_log_made_with_autoincrement_goes_on_numbering_after_its_last_event(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, agent TEXT NOT NULL,"
        " kind TEXT NOT NULL, ts REAL NOT NULL, payload TEXT NOT NULL);"
    )
    db.close()
    store = SQLiteEventStore(path)
    seqs = [store.append(_call(n)).seq for n in range(3)]
    store.close()
    assert seqs == [1, 2, 3]
    assert [e.seq for e in SQLiteEventStore(path).events("r")] == [1, 2, 3]
