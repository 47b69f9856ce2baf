"""Where a resumed attempt restarts: its last logged checkpoint, found without building the whole replay record."""

from __future__ import annotations

from pathlib import Path

from plait.agent._replay import AttemptRecord, last_checkpoint
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import ToolReturned


def _result(store: SQLiteEventStore, agent: str, step: int, attempt: int, checkpoint: str = "") -> None:
    store.append(
        ToolReturned(
            run_id="r",
            agent=agent,
            call_id=f"c{step}",
            name="write_file",
            output="ok",
            step=step,
            attempt=attempt,
            checkpoint=checkpoint,
        )
    )


def test_the_last_checkpoint_of_the_attempt_asked_about(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    _result(store, "t", 1, 1, "a1")
    _result(store, "t", 2, 1, "a2")
    _result(store, "u", 1, 2, "other agent")
    _result(store, "t", 3, 1)  # read a file: no checkpoint
    _result(store, "t", 1, 2, "b1")
    _result(store, "t", 2, 2)
    found = {n: last_checkpoint(RunLog(store, "r"), "t", n) for n in (1, 2, 3)}
    assert found == {1: "a2", 2: "b1", 3: ""}
    assert found == {n: AttemptRecord(RunLog(store, "r"), "t", n).last_checkpoint for n in (1, 2, 3)}
