"""The live view's review screen on the real demo run: each task as `plait review` shows it, its diff, a task
left out (`plait review --drop`), the result applied (`plait apply`), each confirmed and its outcome shown."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cli_support import Plait, git
from screen_text import screen_text
from synthetic_run import RUN_ID, append_run, parallel_run
from textual.pilot import Pilot
from textual.widgets import DataTable, RichLog

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import Decision, RunFinished
from plait.ui._live_review import Confirm, ReviewScreen
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard

SIZE = (150, 44)


async def _settled(pilot: Pilot[None], screen: ReviewScreen) -> None:
    """Wait until the screen has read its review and runs nothing."""
    for _ in range(6000):
        await pilot.pause(0.01)
        if screen.review is not None and not screen.busy and not screen.workers:
            return
    raise AssertionError("the review screen never settled")


def _diff_text(screen: ReviewScreen) -> str:
    return "\n".join(strip.text for strip in screen.query_one("#review-diff", RichLog).lines)


def test_a_task_is_left_out_and_the_result_applied_from_the_review_screen(
    plait: Plait, tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # the commands the screen runs see the same home and identity
    where = tmp_path / "demo"
    demo = plait("demo", "--fast", "--dir", str(where), "--json", cwd=tmp_path)
    assert demo.code == 0, demo.err
    run_id = demo.json()["run_id"]
    store = SQLiteEventStore(where / ".git" / "plait" / "events.db")
    before = git(where, "rev-parse", "HEAD")

    async def scenario() -> tuple[str, list[str]]:
        app = Dashboard(EventFeed(RunLog(store, run_id)), poll_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("r")
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            await _settled(pilot, screen)
            await pilot.press("a", "n")  # no: nothing is run
            await pilot.pause()
            assert app.screen is screen and screen.outcome == []
            table = screen.query_one("#review-tasks", DataTable)
            tasks = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
            assert tasks == ["csv-export", "percent-split", "storage-errors", "remove-expense"]
            assert "tally/export.py" in _diff_text(screen) and "+def expenses_csv" in _diff_text(screen)
            board = screen_text(app)
            table.move_cursor(row=3)
            await pilot.pause()
            assert "remove-expense" in _diff_text(screen).splitlines()[0]
            await pilot.press("d", "i")
            assert isinstance(app.screen, Confirm)
            await pilot.press("y")
            await _settled(pilot, screen)
            await pilot.press("a")
            assert isinstance(app.screen, Confirm)
            await pilot.press("y")
            await _settled(pilot, screen)
            return board, screen.outcome

    board, outcome = asyncio.run(scenario())
    assert "csv-export" in board and "merged by" in board and "d Drop/keep task" in board
    assert "dropped remove-expense: asked for" in outcome
    assert any(line.startswith(f"new result: plait/{run_id}/integration-2 @ ") for line in outcome)
    assert any(line.startswith(f"applied run {run_id} to main") for line in outcome), outcome
    events = store.events(run_id)
    assert [e.branch for e in events if isinstance(e, RunFinished)][-1] == f"plait/{run_id}/integration-2"
    assert [e.topic for e in events if isinstance(e, Decision)][-1] == "apply"
    assert git(where, "rev-parse", "HEAD") != before
    assert git(where, "rev-parse", "HEAD^{tree}") == git(where, "rev-parse", f"plait/{run_id}/integration-2^{{tree}}")


def test_a_run_that_ends_while_watched_opens_its_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")  # no notify-send at the end
    store = SQLiteEventStore(tmp_path / "events.db")
    events = parallel_run()
    events[0] = events[0].model_copy(update={"repo": str(tmp_path)})  # a repository on this machine
    end = next(i for i, e in enumerate(events) if isinstance(e, RunFinished))
    append_run(store, events[:end])

    async def scenario() -> str:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert len(app.screen_stack) == 1
            append_run(store, events[end:])
            app.poll()
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            for _ in range(500):
                await pilot.pause(0.01)
                if not screen.workers:
                    break
            return screen_text(app)

    shown = asyncio.run(scenario())
    assert "no review: " in shown  # the directory is no git repository: said in a line, no traceback
