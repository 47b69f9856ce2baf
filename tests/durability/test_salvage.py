"""`plait doctor --fix` on a log whose file was cut short: every event that still reads is kept."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from plait.events import ModelCallFinished, SQLiteEventStore
from plait.messages import ModelResponse, ToolCall
from plait.run.maintenance import salvage_log

EVENTS = 80


def _answer(call: int) -> ModelCallFinished:
    response = ModelResponse(
        text=f"Answer {call}: I will read the module first, then change it. " * 12,
        tool_calls=(ToolCall.parse(f"c{call}", "read_file", {"path": "src/pkg/module.py"}),),
    )
    return ModelCallFinished(run_id="r1", agent="a", call=call, req_hash="h" * 64, response=response)


def _log(path: Path) -> list[ModelCallFinished]:
    store = SQLiteEventStore(path)
    written = [store.append(_answer(call)) for call in range(EVENTS)]
    store.close()
    assert not path.with_name(path.name + "-wal").exists()  # all of it in the file itself
    return written  # type: ignore[return-value]


def test_a_log_cut_mid_way_through_its_last_page_keeps_every_event_that_reads(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    written = _log(path)
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size - page // 2)

    message = salvage_log(path)

    kept = SQLiteEventStore(path).events("r1")
    assert re.search(rf"kept {len(kept)} event\(s\) of {EVENTS}\b", message), message
    assert len(kept) >= EVENTS - 3  # what one page can hold of ~1 KB events, at most, is lost
    originals = {e.seq: e for e in written}
    assert all(e == originals[e.seq] for e in kept)
    assert list(path.parent.glob("events.db.damaged-*"))


def test_a_log_missing_pages_in_its_middle_keeps_the_events_before_and_after(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    _log(path)
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    pages = path.stat().st_size // page
    with path.open("r+b") as f:  # two leaves of the events table in the middle, zeroed
        f.seek(page * (pages // 2))
        f.write(b"\0" * page * 2)

    message = salvage_log(path)

    seqs = [e.seq for e in SQLiteEventStore(path).events("r1")]
    assert seqs[0] == 1 and seqs[-1] == EVENTS
    assert EVENTS - 8 <= len(seqs) < EVENTS
    assert f"kept {len(seqs)} event(s) of {EVENTS}" in message


def test_the_blobs_of_a_damaged_log_are_kept_with_its_events(tmp_path: Path) -> None:
    """A run's checkpoints and bundles live beside its events: a salvaged log that lost them could not resume."""
    path = tmp_path / "events.db"
    _log(path)
    store = SQLiteEventStore(path)
    blobs = {f"checkpoint/a/{n}": bytes([n]) * 3000 for n in range(3)}
    for key, data in blobs.items():
        store.put_blob("r1", key, data)
    store.close()
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    with path.open("r+b") as f:  # a leaf of the events table, written before the blobs, zeroed
        f.seek(page * 10)
        f.write(b"\0" * page)

    message = salvage_log(path)

    salvaged = SQLiteEventStore(path)
    assert {key: salvaged.get_blob("r1", key) for key in blobs} == blobs
    assert "and 3 blob(s)" in message, message
    assert len(salvaged.events("r1")) < EVENTS, "the damage was where the events were"
