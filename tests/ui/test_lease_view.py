"""Leases as a person follows them: claims and waits per agent in the live view, and readable log lines."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import cast

from screen_text import screen_text
from textual.app import App

from plait.coord import Leases
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import Event, LeaseChanged, RunStarted, TaskStarted
from plait.plan_model import Plan, PlanTask
from plait.ui._log_lines import log_line
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard
from plait.ui.runview import RunView

RUN = "r1"
PLAN = Plan(
    mode="parallel",
    reason="three modules",
    tasks=[
        PlanTask(id="money", title="Give Money a currency", instructions="x", writes=["tally/money.py"]),
        PlanTask(id="export", title="Export as CSV", instructions="x", writes=["tally/export.py"]),
        PlanTask(id="docs", title="Document it", instructions="x", writes=["docs/**"]),
    ],
)


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the condition never held")


def _leases_at_work(store: SQLiteEventStore) -> Leases:
    """A run in which `export` holds README.md and waits for money's file, and `docs` hit a cycle."""
    store.append(RunStarted(run_id=RUN, task="t", repo="/r", base_commit="c", base_ref="main", model="m"))
    for task in PLAN.tasks:
        store.append(
            TaskStarted(run_id=RUN, agent=task.id, title=task.title, branch="b", worktree="w", base_commit="c")
        )
    leases = Leases(RunLog(store, RUN), PLAN, tracked=True)
    for task in PLAN.tasks:
        leases.start(task.id)

    async def scenario() -> None:
        leases.claim("export", "README.md", "document the command")
        waiting = asyncio.create_task(leases.acquire("export", "tally/money.py", "add format_plain"))
        await _until(lambda: "export" in leases.waits())
        leases.claim("docs", "tally/money.py", "a typo")  # refused at once
        money_waits = asyncio.create_task(leases.acquire("money", "docs/index.md", "link it"))
        await _until(lambda: "money" in leases.waits())
        await leases.acquire("docs", "tally/export.py", "a docstring")  # docs -> export -> money -> docs: a cycle
        for job in (waiting, money_waits):
            job.cancel()

    asyncio.run(scenario())
    return leases


def _lease_events(store: SQLiteEventStore) -> list[Event]:
    return [e for e in store.events(RUN, kinds=["lease"]) if isinstance(e, LeaseChanged)]


def test_the_run_view_knows_who_holds_and_who_waits(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    _leases_at_work(store)
    events = store.events(RUN)
    waits = [i for i, e in enumerate(events) if isinstance(e, LeaseChanged) and e.action == "wait"]

    view = RunView.of(RUN, events[: waits[0] + 1])
    export = view.agents["export"]
    assert export.claims == ["README.md"] and export.waiting_for == "money (tally/money.py)"
    assert export.now == "waits for money: tally/money.py"

    view.apply(events[waits[0] + 1 :])
    assert view.agents["money"].waiting_for == "docs (docs/index.md)"
    assert view.agents["docs"].waiting_for == "" and view.agents["docs"].claims == []


def test_the_dashboard_shows_claims_and_waits(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    _leases_at_work(store)
    first_wait = next(e.seq for e in _lease_events(store) if isinstance(e, LeaseChanged) and e.action == "wait")
    shown = SQLiteEventStore(tmp_path / "shown.db")  # the run as it stood while export waited
    for event in store.events(RUN):
        if event.seq <= first_wait:
            shown.append(event.model_copy(update={"seq": 0}))

    async def scenario() -> str:
        app = Dashboard(EventFeed(RunLog(shown, RUN)), poll_s=3600)
        async with app.run_test(size=(130, 34)) as pilot:
            await pilot.pause()
            return screen_text(cast("App[object]", app))

    screen = asyncio.run(scenario())
    assert "leases: export waits for money (tally/money.py) · export holds README.md" in screen
    assert "waits for money: tally/money.py" in screen


def test_log_lines_say_what_each_lease_decision_was(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    _leases_at_work(store)
    lines = [log_line(e, 0.0).split("lease", 1)[1].strip() for e in _lease_events(store)]
    assert lines == [
        "lease: claimed README.md (document the command)",
        "lease: waits for money to finish with tally/money.py (add format_plain)",
        "lease: refused tally/money.py (a typo): held by money",
        "lease: waits for docs to finish with docs/index.md (link it)",
        "lease: refused tally/export.py: waiting for export would close the cycle docs → export → money → docs",
    ]
