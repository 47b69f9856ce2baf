"""The live view as a newcomer meets it: an 80×24 terminal, `q` during a run, a run given its plan, the end."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console
from screen_text import screen_text
from synthetic_run import RUN_ID, T0, append_run, parallel_run
from textual.pilot import Pilot

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import PlanMade, RunFinished
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard

SMALL = (80, 24)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteEventStore:
    return SQLiteEventStore(tmp_path / "events.db")


def _screen(store: SQLiteEventStore, at: float) -> str:
    async def scenario() -> str:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600, clock=lambda: at)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.pause()
            return screen_text(app)

    return asyncio.run(scenario())


def _table(screen: str) -> list[str]:
    """The table's lines: from its header to the rule above the bottom panel."""
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["agent"])
    end = next(i for i, line in enumerate(lines) if line.startswith("─"))
    return lines[start:end]


def test_at_80_columns_cost_and_merge_show_and_no_blank_rows_part_table_and_panel(store: SQLiteEventStore) -> None:
    append_run(store, parallel_run())
    table = _table(_screen(store, T0 + 99))
    header = table[0].split()
    assert header[-2:] == ["cost", "merge"] and "task" not in header, "the title goes first, cost and merge stay"
    assert all(len(line) <= 80 for line in table)
    assert "$0.0789" in table[4] and table[4].rstrip().endswith("integrated")
    assert len(table) == 6 and all(line.strip() for line in table), "no empty rows below the agents"


def test_a_running_run_at_80_columns_shows_its_tool_calls_cut(store: SQLiteEventStore) -> None:
    append_run(store, [e for e in parallel_run() if e.ts <= T0 + 15.1])
    table = _table(_screen(store, T0 + 15.1))
    assert table[0].split()[-2:] == ["cost", "merge"]
    money = next(line for line in table if line.lstrip().startswith("money"))
    assert "read_file path=" in money and money.rstrip().endswith("$0.0089")


def test_a_run_given_its_plan_has_no_planner_row(store: SQLiteEventStore) -> None:
    events = parallel_run()
    given = [e for e in events if e.agent != "planner" or isinstance(e, PlanMade)]
    append_run(store, given)
    screen = _screen(store, T0 + 99)
    assert "planner" not in "\n".join(_table(screen))
    assert "money" in screen


def test_the_end_of_a_run_says_the_gate_and_what_to_do_next(store: SQLiteEventStore) -> None:
    append_run(store, parallel_run())
    screen = " ".join(_screen(store, T0 + 99).split())
    assert "done: gate passed @" in screen
    assert f"`plait review {RUN_ID}` to look at it, `plait apply {RUN_ID}` to take it" in screen


def test_q_closes_the_view_and_the_run_goes_on_with_plain_lines(store: SQLiteEventStore) -> None:
    events = parallel_run()
    first = [e for e in events if e.ts <= T0 + 15.1]
    rest = events[len(first) :]
    detached = asyncio.Event()
    printed = io.StringIO()

    async def work() -> str:
        append_run(store, first)
        await detached.wait()
        for event in rest:
            store.append(event)
            await asyncio.sleep(0)
        return "outcome"

    async def press_q(pilot: Pilot[object]) -> None:
        app = pilot.app
        assert isinstance(app, Dashboard)
        for _ in range(500):
            await pilot.pause(0.01)
            if "cli" in app.agent_ids:
                break
        await pilot.press("q")
        detached.set()

    async def scenario() -> str:
        console = Console(file=printed, width=200)
        app = Dashboard(EventFeed(None), log_getter=lambda: RunLog(store, RUN_ID), poll_s=0.01, console=console)
        return await app.run_work(work(), headless=True, auto_pilot=press_q)

    assert asyncio.run(scenario()) == "outcome"
    text = printed.getvalue()
    assert f"the live view is closed and the run goes on here; `plait status {RUN_ID}`" in text
    assert "cli started attempt 2" in text, "the steps after q are printed"
    assert isinstance(store.events(RUN_ID)[-1], RunFinished)
