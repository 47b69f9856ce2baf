"""The live view, headless: rows follow the log, the transcript follows an agent, the screen is pinned."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from screen_text import assert_snapshot, screen_text
from synthetic_run import ENV_SECRET, FAKE_KEY, RUN_ID, T0, append_run, parallel_run, sha
from textual.pilot import Pilot
from textual.widgets import DataTable, RichLog

from plait.cli._steering import LoggedSteering
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import Event, RunFinished, RunStarted, TaskStarted, ToolCalled
from plait.messages import ToolCall
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard, run_with_dashboard

SNAPSHOTS = Path(__file__).parent / "snapshots"
SIZE = (130, 34)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SQLiteEventStore:
    monkeypatch.setenv(*ENV_SECRET)
    return SQLiteEventStore(tmp_path / "events.db")


def _until(events: list[Event], predicate: Callable[[Event], bool]) -> int:
    """Index of the first event matching `predicate`."""
    return next(i for i, e in enumerate(events) if predicate(e))


def _rows(app: Dashboard) -> dict[str, list[str]]:
    table = app.query_one("#agents", DataTable)
    return {key: [str(c) for c in table.get_row_at(i)] for i, key in enumerate(app.agent_ids)}


def _log_text(app: Dashboard) -> str:
    log = app.screen.query_one("#transcript", RichLog)
    return "\n".join(strip.text for strip in log.lines)


def test_rows_appear_and_change_as_events_are_appended(store: SQLiteEventStore) -> None:
    events = parallel_run()
    cut = _until(events, lambda e: isinstance(e, ToolCalled) and e.agent == "cli")
    append_run(store, events[:cut])

    async def scenario() -> None:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600, clock=lambda: T0 + 20)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            rows = _rows(app)
            assert list(rows) == ["planner", "money", "ledger", "cli"]
            assert rows["planner"][2] == "done" and rows["money"][2] == "running"
            assert rows["money"][3] == "thinking…" and rows["ledger"][3].startswith("retry 1 in 2s: HTTP 429")
            append_run(store, events[cut:])
            assert app.poll() == len(events) - cut
            await pilot.pause()
            rows = _rows(app)
            assert list(rows) == ["planner", "money", "ledger", "cli", "resolver-money"]
            assert rows["cli"][2] == "done #2" and rows["cli"][4] == "7" and rows["cli"][7] == "integrated"
            assert app.poll() == 0

    asyncio.run(scenario())


def test_the_view_reads_new_events_on_its_own(store: SQLiteEventStore) -> None:
    events = parallel_run()
    append_run(store, events[:1])

    async def scenario() -> None:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=0.02)
        async with app.run_test(size=SIZE) as pilot:
            append_run(store, events[1:40])
            for _ in range(500):
                await pilot.pause(0.01)
                if "money" in app.agent_ids:
                    break
            assert "money" in app.agent_ids and app.view is not None and app.view.last_seq == 40

    asyncio.run(scenario())


def test_the_transcript_follows_a_tool_call_appended_while_it_is_open(store: SQLiteEventStore) -> None:
    events = parallel_run()
    cut = _until(events, lambda e: isinstance(e, ToolCalled) and e.agent == "ledger" and e.call.name == "run")
    append_run(store, events[:cut])

    async def scenario() -> None:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("down", "down", "enter")
            await pilot.pause()
            assert "transcript of ledger" in screen_text(app).splitlines()[0]
            assert "edit_file path=tally/ledger.py" in _log_text(app)
            assert "pytest -q tests/test_ledger.py" not in _log_text(app)
            call = ToolCall.parse("x1", "run", {"command": "pytest -q tests/test_ledger.py"})
            store.append(ToolCalled(run_id=RUN_ID, agent="ledger", call=call, ts=T0 + 18.5))
            store.append(ToolCalled(run_id=RUN_ID, agent="money", call=call.model_copy(update={"id": "x2"})))
            app.poll()
            await pilot.pause()
            text = _log_text(app)
            assert text.rstrip().endswith("→ run command=pytest -q tests/test_ledger.py")
            assert text.count("pytest -q tests/test_ledger.py") == 1, "another agent's call leaked in"
            await pilot.press("escape")
            assert isinstance(app.screen.query_one("#agents"), DataTable)

    asyncio.run(scenario())


async def _shots(app: Dashboard, pilot: Pilot[None]) -> tuple[str, str]:
    await pilot.pause()
    board = screen_text(app)
    await pilot.press("down", "down", "t")
    await pilot.pause()
    return board, screen_text(app)


def test_the_screens_match_their_snapshots_and_show_no_secret(store: SQLiteEventStore) -> None:
    append_run(store, parallel_run())

    async def scenario() -> tuple[str, str]:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600, clock=lambda: T0 + 99, steering=LoggedSteering())
        async with app.run_test(size=SIZE) as pilot:
            return await _shots(app, pilot)

    board, transcript = asyncio.run(scenario())
    assert_snapshot(board, SNAPSHOTS / "dashboard.txt")
    assert_snapshot(transcript, SNAPSHOTS / "transcript_ledger.txt")
    for text in (board, transcript):
        assert FAKE_KEY not in text and ENV_SECRET[1] not in text
    assert "DEPLOY_TOKEN=[REDACTED]" in transcript


def test_a_run_in_progress_matches_its_snapshot(store: SQLiteEventStore) -> None:
    events = parallel_run()
    append_run(store, [e for e in events if e.ts <= T0 + 15.1])

    async def scenario() -> str:
        app = Dashboard(
            EventFeed(RunLog(store, RUN_ID)), poll_s=3600, clock=lambda: T0 + 15.1, steering=LoggedSteering()
        )
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            return screen_text(app)

    assert_snapshot(asyncio.run(scenario()), SNAPSHOTS / "dashboard_running.txt")


def test_run_with_dashboard_shows_the_run_and_returns_its_result(store: SQLiteEventStore) -> None:
    events = parallel_run()
    ids: list[str] = []

    async def work() -> str:
        ids.append(RUN_ID)
        for event in events:
            store.append(event)
            await asyncio.sleep(0)
        return "outcome"

    async def scenario() -> tuple[str, Dashboard]:
        app = Dashboard(EventFeed(None), log_getter=lambda: RunLog(store, ids[0]) if ids else None, poll_s=0.01)
        return await app.run_work(work(), headless=True), app

    result, app = asyncio.run(scenario())
    assert result == "outcome"
    assert app.view is not None and app.view.status == "done" and len(app.events) == len(events)


def test_run_with_dashboard_passes_errors_through(store: SQLiteEventStore) -> None:
    async def work() -> None:
        raise ValueError("the run broke")

    with pytest.raises(ValueError, match="the run broke"):
        asyncio.run(run_with_dashboard(work(), lambda: None, headless=True))


def test_ctrl_c_in_the_view_stops_the_run(store: SQLiteEventStore) -> None:
    stopped: list[str] = []
    started = RunStarted(run_id="r1", task="t", repo="/r", base_commit=sha("b"), base_ref="main", model="m")

    async def work() -> None:
        store.append(started)
        store.append(TaskStarted(run_id="r1", agent="a", title="t", branch="b", worktree="/w", base_commit="c"))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            store.append(RunFinished(run_id="r1", status="interrupted"))
            stopped.append("cancelled")
            raise

    async def press_ctrl_c(pilot: Pilot[object]) -> None:
        app = pilot.app
        assert isinstance(app, Dashboard)
        for _ in range(500):
            await pilot.pause(0.01)
            if "a" in app.agent_ids:
                break
        await pilot.press("ctrl+c")

    async def scenario() -> None:
        app = Dashboard(EventFeed(None), log_getter=lambda: RunLog(store, "r1"), poll_s=0.01)
        await app.run_work(work(), headless=True, auto_pilot=press_ctrl_c)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(scenario())
    assert stopped == ["cancelled"]
    assert isinstance(store.events("r1")[-1], RunFinished)
