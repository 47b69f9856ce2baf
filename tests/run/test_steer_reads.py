"""The user's steering is read from the log with a cursor: each live call reads what was appended since."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import Event, NotesDelivered, TaskStarted
from plait.run.steer import Steering, said, steer


class Counting(SQLiteEventStore):
    """A real store that counts the events its reads hand back."""

    read = 0
    afters: list[int]

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        found = super().events(run_id, agent=agent, kinds=kinds, after=after)
        self.read += len(found)
        self.afters = [*getattr(self, "afters", []), after]
        return found


def _started(store: SQLiteEventStore, attempt: int = 1) -> None:
    store.append(
        TaskStarted(run_id="r", agent="t", title="t", branch="b", worktree="w", base_commit="c", attempt=attempt)
    )


def _delivered(store: SQLiteEventStore, *notes: str) -> None:
    store.append(NotesDelivered(run_id="r", agent="t", decision="told", notes=list(notes), step=1, attempt=1))


def test_a_live_call_reads_only_what_was_appended_since(tmp_path: Path) -> None:
    store = Counting(tmp_path / "events.db")
    _started(store)
    for i in range(200):  # a long attempt: every step's notes, all of this task's
        _delivered(store, f"note {i}")
    steering = Steering(RunLog(store, "r"), "t")
    assert steering.notes() == []
    assert asyncio.run(steering.hold()) is None
    steer(RunLog(store, "r"), "t", "say", text="look at b.py")
    for i in range(50):  # the other agents go on
        store.append(NotesDelivered(run_id="r", agent="u", decision="told", notes=[f"{i}"], step=1, attempt=1))
    told = store.events("r", agent="t")[-1].seq
    assert steering.notes() == [said("look at b.py")]
    store.read, store.afters = 0, []
    for _ in range(5):  # five more live calls, the message not yet delivered
        assert steering.notes() == [said("look at b.py")]
        assert asyncio.run(steering.hold()) is None
    assert store.read == 0  # before, each call read the task's 201 events and its steering again
    assert min(store.afters) >= told  # a read starts where the task's last read ended, not at its start
    _delivered(store, said("look at b.py"))
    assert steering.notes() == []
    assert store.read == 1


def test_what_the_cursor_sees_is_what_a_fresh_read_sees(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    _started(store)
    steering = Steering(RunLog(store, "r"), "t")
    steer(RunLog(store, "r"), "t", "say", text="one")
    steer(RunLog(store, "r"), "t", "say", text="one")
    assert steering.notes() == [said("one"), said("one")]
    _delivered(store, said("one"))
    assert steering.notes() == [said("one")]
    steer(RunLog(store, "r"), "t", "pause")
    steer(RunLog(store, "r"), "t", "resume")
    assert asyncio.run(steering.hold()) is None
    steer(RunLog(store, "r"), "t", "stop", retry=True)
    assert asyncio.run(steering.hold()) == "stopped by the user, to be tried again from its work"
    _started(store, attempt=2)  # the next attempt: the stop was the earlier one's
    assert asyncio.run(steering.hold()) is None
    assert steering.notes() == Steering(RunLog(store, "r"), "t").notes() == [said("one")]
