"""An agent's events appended from the store's writer thread (`RunLog.append_async`): written off the event loop,
in the order each agent logged them, seen by a read that could see them, and a failure told to the one waiting."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from plait.errors import StateError
from plait.events import Event, ObservedStore, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import Decision, ModelCallFinished, ModelCallStarted
from plait.messages import ModelResponse


def _sent(agent: str, call: int) -> ModelCallStarted:
    return ModelCallStarted(run_id="r", agent=agent, call=call, attempt=1, req_hash="h", model="m", messages=1)


def _said(agent: str, what: str) -> Decision:
    return Decision(run_id="r", agent=agent, topic="t", decision=what)


def test_an_awaited_append_is_written_by_a_thread_other_than_the_event_loops(tmp_path: Path) -> None:
    written_on: list[int] = []
    store = ObservedStore(SQLiteEventStore(tmp_path / "e.db"), lambda e: written_on.append(threading.get_ident()))
    log = RunLog(store, "r")

    async def agent() -> tuple[int, Event]:
        return threading.get_ident(), await log.append_async(_sent("a", 1))

    loop_thread, stored = asyncio.run(agent())
    assert stored.seq > 0
    assert written_on and loop_thread not in written_on
    assert [e.seq for e in log.events(agent="a")] == [stored.seq]
    store.close()


def test_each_agents_events_keep_the_order_it_logged_them_in(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    log = RunLog(store, "r")

    async def agent(name: str) -> None:
        for step in range(20):
            await log.append_async(_sent(name, step))
            if step % 3 == 0:  # an append made on the loop between them
                log.append(_said(name, f"step {step}"))
            await asyncio.sleep(0)

    async def run() -> None:
        await asyncio.gather(*(agent(f"a{i}") for i in range(4)))

    asyncio.run(run())
    for i in range(4):
        logged = [(e.kind, getattr(e, "call", None)) for e in log.events(agent=f"a{i}")]
        expected: list[tuple[str, int | None]] = []
        for step in range(20):
            expected.append(("model_request", step))
            if step % 3 == 0:
                expected.append(("decision", None))
        assert logged == expected
    store.close()


def test_an_append_writes_first_what_its_agent_posted_and_a_read_what_it_can_see(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    store.post(_sent("a", 1))
    stored = store.append(_said("a", "after the call"))
    assert [e.kind for e in store.events("r", agent="a")] == ["model_request", "decision"]
    assert [e.seq for e in store.events("r", agent="a")][-1] == stored.seq
    store.post(_sent("b", 1))
    assert [e.kind for e in store.events("r", agent="b", kinds=["model_request"])] == ["model_request"]
    store.close()


def test_a_durable_event_posted_is_on_disk_before_its_poster_is_told(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    answer = ModelCallFinished(
        run_id="r", agent="a", call=1, attempt=1, req_hash="h", response=ModelResponse(text="hi"), cost_usd=0.0
    )
    told: list[Event | BaseException] = []
    store.post(answer, told.append)
    assert len(told) == 1 and not isinstance(told[0], BaseException)
    assert store.synced == told[0].seq
    store.close()


def test_a_write_that_fails_is_raised_to_the_agent_waiting_for_it_and_the_writer_goes_on(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    log = RunLog(store, "r")
    other = sqlite3.connect(tmp_path / "e.db")  # the log refuses one agent's events, as a full disk would all
    other.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.agent = 'bad' BEGIN SELECT RAISE(ABORT, 'x'); END"
    )
    other.close()

    async def agents() -> Event:
        with pytest.raises(StateError, match="cannot write the event log"):
            await asyncio.wait_for(log.append_async(_sent("bad", 1)), timeout=30)
        return await asyncio.wait_for(log.append_async(_sent("good", 1)), timeout=30)

    assert asyncio.run(agents()).seq > 0
    assert [e.agent for e in log.events()] == ["good"]
    store.close()


def test_what_is_posted_is_written_when_the_store_is_closed(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    for call in range(50):
        store.post(_sent("a", call))
    store.close()
    again = SQLiteEventStore(tmp_path / "e.db")
    assert [e.call for e in again.events("r") if isinstance(e, ModelCallStarted)] == list(range(50))
    again.close()


def test_the_posters_of_events_written_by_an_append_that_then_fails_are_told(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    other = sqlite3.connect(tmp_path / "e.db")
    refuse = "SELECT RAISE(ABORT, 'refused')"
    other.execute(f"CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.kind = 'decision' BEGIN {refuse}; END")
    other.close()
    told: list[Event | BaseException] = []
    for call in range(20):
        store.post(_sent("a", call), told.append)
        with pytest.raises(StateError, match="cannot write the event log"):
            store.append(_said("a", "refused"))  # writes the call posted before it first, then fails
    store.close()
    assert [e.call for e in told if isinstance(e, ModelCallStarted)] == list(range(20))
