"""The live view of a run on a cluster names the machine each agent's attempt runs on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from synthetic_run import RUN_ID, T0, append_run, parallel_run
from textual.widgets import Static

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import AttemptPlaced, TaskStarted
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard


def test_the_view_names_the_node_a_backend_placed_each_agent_on(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    events = parallel_run()
    cut = next(i for i, e in enumerate(events) if isinstance(e, TaskStarted) and e.agent == "ledger") + 1
    placed = [
        AttemptPlaced(run_id=RUN_ID, agent=a, decision="", node=n * 8, host=h, attempt=1, ts=T0 + 5)
        for a, n, h in (("money", "a", "worker-1"), ("ledger", "b", "worker-2"))
    ]
    append_run(store, [*events[:cut], *placed])

    async def scenario() -> None:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600, clock=lambda: T0 + 20)
        async with app.run_test(size=(130, 34)) as pilot:
            await pilot.pause()
            text = str(app.query_one("#merges", Static).render())
            assert "on: ledger worker-2 · money worker-1" in text

    asyncio.run(scenario())
