"""A row of this schema is parsed and checked by its kind's model straight from its JSON; every other row is read as
it always was. Both ways give the same event: its number in the log set, an old row upgraded, a row whose `kind`
column disagrees with its payload read by its payload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plait.errors import StateError
from plait.events.store import SQLiteEventStore
from plait.events.types import Decision, ModelCallFinished, NotesDelivered, RunStarted
from plait.messages import ModelResponse, ToolCall, Usage


def _raw(path: Path, kind: str, payload: str) -> None:
    store = SQLiteEventStore(path)
    store._db.execute(  # rows as an older plait, or another program, wrote them
        "INSERT INTO events (run_id, agent, kind, ts, payload) VALUES ('r1', 'a', ?, 0, ?)", (kind, payload)
    )
    store.close()


def test_rows_read_straight_from_their_json_are_the_events_written(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    call = ToolCall(id="c1", name="read_file", arguments={"path": "a.py"})
    response = ModelResponse(text="ok", tool_calls=(call,), usage=Usage(input_tokens=7, cached_tokens=2))
    written = [
        store.append(RunStarted(run_id="r1", task="t", repo=".", base_commit="c", base_ref="main", model="m")),
        store.append(ModelCallFinished(run_id="r1", agent="a", call=1, req_hash="h", response=response, cost_usd=0.5)),
        store.append(Decision(run_id="r1", topic="budget", decision="warned", data={"level": "warn"})),
    ]
    read = store.events("r1")
    assert read == written and [e.seq for e in read] == [1, 2, 3]
    assert all("seq" in e.model_fields_set for e in read)
    store.close()


def test_old_and_odd_rows_are_read_the_long_way(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    notes = {"kind": "decision", "run_id": "r1", "agent": "a", "ts": 1.0, "topic": "notes", "decision": "d"}
    notes["data"] = {"notes": ["n1"], "step": 2, "attempt": 1}
    _raw(path, "decision", json.dumps(notes))  # schema 1 without its `v`: a decision that became its own kind
    _raw(path, "decision", json.dumps({**notes, "v": 1}))
    started = RunStarted(run_id="r1", task="t", repo=".", base_commit="c", base_ref="main", model="m")
    _raw(path, "plan", started.model_dump_json(exclude={"seq"}))  # the kind column says otherwise
    store = SQLiteEventStore(path)
    first, second, third = store.events("r1")
    assert isinstance(first, NotesDelivered) and first.notes == ["n1"] and first.seq == 1
    assert isinstance(second, NotesDelivered) and second.seq == 2
    assert isinstance(third, RunStarted) and third.seq == 3 and third.task == "t"
    store.close()


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ('{"v": 2, "kind": "run_started", "run_id": "r1"', "is not valid JSON"),
        ('{"v": 9, "kind": "run_started", "run_id": "r1"}', r"was written by a newer plait \(schema 9\)"),
        (
            '{"v": 2, "kind": "run_started", "run_id": "r1", "ts": 1}',
            "is malformed at run_started.task",
        ),
    ],
)
def test_a_bad_row_is_worded_as_before(tmp_path: Path, payload: str, said: str) -> None:
    _raw(tmp_path / "events.db", "run_started", payload)
    store = SQLiteEventStore(tmp_path / "events.db")
    with pytest.raises(StateError, match=rf"^event 1 in .*events.db {said}"):
        store.events("r1")
    store.close()
