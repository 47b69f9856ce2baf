"""A run's log handle reads and appends the events of its own run only, over a real SQLite store."""

from __future__ import annotations

from pathlib import Path

from plait.events import Decision, NotePosted, RunLog, SQLiteEventStore


def test_a_run_log_appends_and_reads_its_own_run_only(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    mine, other = RunLog(store, "r1"), RunLog(store, "r2")
    first = mine.append(Decision(run_id="r1", topic="mode", decision="one agent"))
    other.append(Decision(run_id="r2", topic="mode", decision="parallel"))
    note = mine.append(NotePosted(run_id="r1", agent="a", topic="api", text="the route moved", paths=["api.py"]))

    assert [e.seq for e in mine.events()] == [first.seq, note.seq]
    assert mine.events(kinds=["note"]) == [note]
    assert mine.events(agent="a") == [note]
    assert mine.events(after=first.seq) == [note]
    assert [e.run_id for e in other.events()] == ["r2"]
    store.close()


def test_a_run_log_keeps_blobs_under_its_run(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    mine, other = RunLog(store, "r1"), RunLog(store, "r2")
    mine.put_blob("checkpoint/abc", b"bundle")
    assert mine.get_blob("checkpoint/abc") == b"bundle"
    assert other.get_blob("checkpoint/abc") is None
    assert store.get_blob("r1", "checkpoint/abc") == b"bundle"
    store.close()
