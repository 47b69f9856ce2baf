"""What every event store promises, checked against SQLite and PostgreSQL alike (the `log` fixture)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import pytest
from store_logs import Log

from plait.errors import StateError
from plait.events import Decision, Event, ModelCallFinished, RunStarted, ToolCalled
from plait.events.lease import lease_for
from plait.events.store import RedactingStore
from plait.log_upgrade import SCHEMA_VERSION
from plait.messages import ModelResponse, ToolCall, Usage
from plait.redact import REDACTED, Redactor

T = TypeVar("T")

WRITER = """
import sys
from pathlib import Path
from plait.events import Decision
from plait.events.backends import open_event_store
store = open_event_store(sys.argv[1], Path(sys.argv[2]))
for i in range(int(sys.argv[4])):
    print(store.append(Decision(run_id="r1", agent=sys.argv[3], topic="t", decision=str(i))).seq, flush=True)
"""

HOLDER = """
import sys, time
from pathlib import Path
from plait.events.backends import open_event_store
from plait.events.lease import lease_for
lease = lease_for(open_event_store(sys.argv[1], Path(sys.argv[2])), "r1")
lease.acquire()
print("held", flush=True)
time.sleep(120)
"""


def _started(run_id: str) -> RunStarted:
    return RunStarted(run_id=run_id, task="t", repo="/r", base_commit="abc", base_ref="main", model="scripted:x")


def _python(log: Log, script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, log.location, str(log.path), *args], stdout=subprocess.PIPE, text=True
    )


def _eventually(attempt: Callable[[], T], timeout: float = 15.0) -> T:
    """`attempt()`'s result once it stops raising `StateError` (a server notices a dead client in its own time)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return attempt()
        except StateError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _follow(log: Log, done: threading.Event) -> list[Event]:
    """Every event of run r1 as a follower sees them: read after the last one seen until `done`, then once more."""
    store, seen = log.open(), []
    while True:
        finished = done.is_set()
        seen += store.events("r1", after=seen[-1].seq if seen else 0)
        if finished:
            store.close()
            return seen


def test_events_come_back_typed_in_order_and_filtered(log: Log) -> None:
    store = log.open()
    first = store.append(_started("r1"))
    call = ToolCall.parse("c1", "read_file", '{"path": "a.py"}')
    store.append(ToolCalled(run_id="r1", agent="main", call=call))
    store.append(_started("r2"))
    response = ModelResponse(text="hi", usage=Usage(input_tokens=5, output_tokens=2, cached_tokens=1))
    store.append(ModelCallFinished(run_id="r1", agent="main", call=1, req_hash="h", response=response, cost_usd=0.5))

    events = log.open().events("r1")
    assert [e.kind for e in events] == ["run_started", "tool_call", "model_response"]
    assert [e.seq for e in events] == sorted({e.seq for e in events}) and events[0].seq == first.seq
    assert isinstance(events[1], ToolCalled) and events[1].call.arguments == {"path": "a.py"}
    assert isinstance(events[2], ModelCallFinished) and events[2].response.usage.cached_tokens == 1
    assert events[2].model_dump(exclude={"seq"}) == store.events("r1")[2].model_dump(exclude={"seq"})
    assert store.run_ids() == ["r1", "r2"]
    assert [e.kind for e in store.events("r1", agent="main")] == ["tool_call", "model_response"]
    assert [e.kind for e in store.events("r1", kinds=["tool_call", "run_started"])] == ["run_started", "tool_call"]
    assert [e.kind for e in store.events("r1", after=events[1].seq)] == ["model_response"]
    assert store.events("nothing") == []
    store.close()


def test_appends_from_threads_all_land_in_each_writers_order_and_a_follower_misses_none(log: Log) -> None:
    store, done = log.open(), threading.Event()

    def write(agent: str) -> None:
        for i in range(40):
            store.append(Decision(run_id="r1", agent=agent, topic="t", decision=str(i)))

    writers = [threading.Thread(target=write, args=(f"a{n}",)) for n in range(8)]
    followed: list[list[Event]] = []
    follower = threading.Thread(target=lambda: followed.append(_follow(log, done)))
    follower.start()
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    done.set()
    follower.join()
    events = store.events("r1")
    assert len(events) == 320 and len({e.seq for e in events}) == 320
    for n in range(8):
        assert [e.decision for e in events if isinstance(e, Decision) and e.agent == f"a{n}"] == [
            str(i) for i in range(40)
        ]
    assert [e.seq for e in followed[0]] == [e.seq for e in events]


def test_appends_from_two_processes_all_land_and_a_follower_misses_none(log: Log) -> None:
    log.open().close()
    done = threading.Event()
    followed: list[list[Event]] = []
    follower = threading.Thread(target=lambda: followed.append(_follow(log, done)))
    follower.start()
    writers = [_python(log, WRITER, agent, "150") for agent in ("p1", "p2")]
    acked = [w.communicate(timeout=60)[0].split() for w in writers]
    done.set()
    follower.join()
    assert all(w.returncode == 0 for w in writers)
    events = log.open().events("r1")
    assert sorted(int(s) for s in acked[0] + acked[1]) == [e.seq for e in events]
    for agent in ("p1", "p2"):
        assert [e.decision for e in events if isinstance(e, Decision) and e.agent == agent] == [
            str(i) for i in range(150)
        ]
    assert [e.seq for e in followed[0]] == [e.seq for e in events]


def test_an_acknowledged_append_survives_its_writer_being_killed(log: Log) -> None:
    log.open().close()
    writer = _python(log, WRITER, "w", "1000000")
    assert writer.stdout is not None
    acked = [int(writer.stdout.readline()) for _ in range(60)]
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    writer.stdout.close()
    store = log.open()
    stored = {e.seq for e in store.events("r1")}
    assert set(acked) <= stored
    assert getattr(store, "integrity")() == "ok"  # noqa: B009  (both stores have it; the protocol does not)


def test_a_second_driver_is_refused_while_the_first_lives_and_takes_over_when_it_dies(log: Log) -> None:
    log.open().close()
    holder = _python(log, HOLDER)
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        second = lease_for(log.open(), "r1")
        with pytest.raises(StateError, match=rf"run r1 is driven by pid {holder.pid} on .*stop that process first"):
            second.acquire()
        other = lease_for(log.open(), "other-run")
        assert other.acquire() == ""  # other runs are free
        other.release()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    note = _eventually(second.acquire)
    assert f"took over run r1 from pid {holder.pid}" in note and "which is gone" in note
    second.beat()
    second.release()
    again = lease_for(log.open(), "r1")
    assert again.acquire() == ""  # released cleanly: nobody to take over from
    again.release()


def test_the_log_records_its_schema_and_refuses_events_of_a_newer_one(log: Log) -> None:
    log.open().append(_started("r1"))
    assert log.meta()["schema_version"] == str(SCHEMA_VERSION)
    newer = _started("r1").model_dump(mode="json") | {"v": SCHEMA_VERSION + 1}
    log.raw_event("r1", json.dumps(newer))
    with pytest.raises(StateError, match=rf"written by a newer plait \(schema {SCHEMA_VERSION + 1}\); upgrade plait"):
        log.open().events("r1")


@pytest.mark.parametrize(
    ("payload", "said"),
    [("{not json", r"is not valid JSON"), ('{"v": 1, "kind": "decision", "run_id": "r1"}', r"is malformed at")],
)
def test_an_unreadable_event_is_a_state_error_naming_it(log: Log, payload: str, said: str) -> None:
    store = log.open()
    store.append(_started("r1"))
    log.raw_event("r1", payload)
    with pytest.raises(StateError, match=rf"event \d+ in .* {said}"):
        store.events("r1")
    decode = getattr(store, "decode")  # noqa: B009
    with pytest.raises(StateError):
        decode(payload)
    assert decode(_started("r1").model_dump_json()).kind == "run_started"


def test_a_redacting_store_on_top_writes_no_secret(log: Log) -> None:
    secret = "s3cr3t-Value-4711"
    store = RedactingStore(log.open(), Redactor([secret], env={}))
    store.append(
        Decision(run_id="r1", topic="t", decision=f"used {secret} and postgresql://u:hunter22@db/x", data={"k": secret})
    )
    raw = " ".join(str(row) for row in log.sql("SELECT payload FROM " + ("plait_events" if log.location else "events")))
    assert secret not in raw and "hunter22" not in raw and REDACTED in raw
    (event,) = log.open().events("r1")
    assert isinstance(event, Decision) and event.decision == f"used {REDACTED} and postgresql://u:{REDACTED}@db/x"
