"""Steering from the live view, headless: `p` pauses the agent under the cursor and resumes it; a run's end rings."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from synthetic_run import ENV_SECRET, RUN_ID, append_run, parallel_run
from textual.widgets import DataTable

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import RunFinished, ToolCalled, UserSteered
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard


class _Counted(Dashboard):
    rung = 0

    def bell(self) -> None:
        self.rung += 1


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SQLiteEventStore:
    monkeypatch.setenv(*ENV_SECRET)
    monkeypatch.setenv("PATH", "")  # no notify-send: the bell alone
    return SQLiteEventStore(tmp_path / "events.db")


def test_p_pauses_the_agent_under_the_cursor_then_resumes_it(store: SQLiteEventStore) -> None:
    events = parallel_run()
    append_run(store, events[: next(i for i, e in enumerate(events) if isinstance(e, ToolCalled) and e.agent == "cli")])

    async def scenario() -> None:
        app = _Counted(EventFeed(RunLog(store, RUN_ID)), poll_s=3600)
        async with app.run_test(size=(130, 34)) as pilot:
            await pilot.pause()
            app.query_one("#agents", DataTable).move_cursor(row=app.agent_ids.index("money"))
            await pilot.press("p")
            app.poll()
            assert app.view is not None and app.view.agents["money"].state == "paused"
            await pilot.press("p")
            app.poll()
            assert app.view.agents["money"].state == "running"
            assert app.rung == 0

    asyncio.run(scenario())
    steers = [e for e in store.events(RUN_ID) if isinstance(e, UserSteered)]
    assert [(e.agent, e.action) for e in steers] == [("money", "pause"), ("money", "resume")]


def test_the_end_of_a_watched_run_rings_the_bell(store: SQLiteEventStore) -> None:
    events = parallel_run()
    end = next(i for i, e in enumerate(events) if isinstance(e, RunFinished))
    append_run(store, events[:end])

    async def scenario() -> int:
        app = _Counted(EventFeed(RunLog(store, RUN_ID)), poll_s=3600)
        async with app.run_test(size=(130, 34)) as pilot:
            await pilot.pause()
            assert app.rung == 0
            append_run(store, events[end:])
            app.poll()
            return app.rung

    assert asyncio.run(scenario()) == 1
