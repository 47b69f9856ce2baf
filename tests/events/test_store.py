from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from plait.errors import StateError
from plait.events import (
    Decision,
    Event,
    ModelCallFinished,
    ObservedStore,
    RunStarted,
    SQLiteEventStore,
    ToolCalled,
)
from plait.messages import ModelResponse, ToolCall, Usage


def _started(run_id: str) -> RunStarted:
    return RunStarted(run_id=run_id, task="t", repo="/r", base_commit="abc", base_ref="main", model="scripted:x")


def test_events_come_back_typed_in_order_with_sequence_numbers(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    first = store.append(_started("r1"))
    call = ToolCall.parse("c1", "read_file", '{"path": "a.py"}')
    store.append(ToolCalled(run_id="r1", agent="main", call=call))
    response = ModelResponse(text="hi", usage=Usage(input_tokens=5, output_tokens=2, cached_tokens=1))
    store.append(ModelCallFinished(run_id="r1", agent="main", call=1, req_hash="h", response=response, cost_usd=0.5))
    store.append(_started("r2"))

    events = store.events("r1")
    assert [e.kind for e in events] == ["run_started", "tool_call", "model_response"]
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert first.seq == events[0].seq
    assert isinstance(events[1], ToolCalled) and events[1].call.arguments == {"path": "a.py"}
    assert isinstance(events[2], ModelCallFinished) and events[2].response.usage.cached_tokens == 1
    assert store.run_ids() == ["r1", "r2"]
    assert [e.kind for e in store.events("r1", agent="main", kinds=["tool_call"])] == ["tool_call"]
    assert [e.kind for e in store.events("r1", after=events[1].seq)] == ["model_response"]


def test_events_survive_reopening_and_the_file_is_wal(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    store = SQLiteEventStore(path)
    store.append(_started("r1"))
    store.close()
    again = SQLiteEventStore(path)
    assert [e.kind for e in again.events("r1")] == ["run_started"]
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_appends_from_several_processes_all_land(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    SQLiteEventStore(path).close()
    code = (
        "import sys\n"
        "from plait.events import SQLiteEventStore, Decision\n"
        "s = SQLiteEventStore(sys.argv[1])\n"
        "for i in range(50):\n"
        "    s.append(Decision(run_id='r', agent=sys.argv[2], topic='t', decision=str(i)))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"p{i}"]) for i in range(4)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    events = SQLiteEventStore(path).events("r")
    assert len(events) == 200
    assert len({e.seq for e in events}) == 200
    for agent in ("p0", "p1", "p2", "p3"):
        mine = [e for e in events if e.agent == agent]
        assert [e.decision for e in mine if isinstance(e, Decision)] == [str(i) for i in range(50)]


def test_a_damaged_file_is_a_state_error_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StateError, match="damaged"):
        SQLiteEventStore(path)


def test_a_malformed_event_names_its_sequence_number(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    store = SQLiteEventStore(path)
    store.append(_started("r1"))
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO events (run_id, agent, kind, ts, payload) VALUES ('r1', '', 'x', 0, '{\"kind\": \"nope\"}')"
    )
    db.execute("INSERT INTO events (run_id, agent, kind, ts, payload) VALUES ('r2', '', 'x', 0, 'not json')")
    db.commit()
    with pytest.raises(StateError, match="event 2 .* malformed"):
        store.events("r1")
    with pytest.raises(StateError, match="event 3 .* not valid JSON"):
        store.events("r2")


def test_an_event_from_a_newer_plait_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    store = SQLiteEventStore(path)
    db = sqlite3.connect(path)
    db.execute("INSERT INTO events (run_id, agent, kind, ts, payload) VALUES ('r', '', 'x', 0, '{\"v\": 99}')")
    db.commit()
    with pytest.raises(StateError, match="newer plait"):
        store.events("r")


def test_observed_store_tells_listeners_after_each_append(tmp_path: Path) -> None:
    seen: list[Event] = []
    store = ObservedStore(SQLiteEventStore(tmp_path / "e.db"), seen.append)
    store.append(_started("r1"))
    assert len(seen) == 1 and seen[0].seq == 1
    assert store.run_ids() == ["r1"]
