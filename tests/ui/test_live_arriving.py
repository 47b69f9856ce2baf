"""The live view shows a running agent's reply as it streams in: a real agent on a real streaming model (the local
wire server holding its reply mid-stream), the end of the partial text in the agent's row, gone once the call's
answer is logged. Nothing of it is logged."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable

from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events.arriving import Channel
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.models import PriceTable
from plait.models.openai_provider import OpenAIModel
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard
from plait.workspace import LocalShell
from wire_server import WireServer

FIRST = "I have read the module and the failing test, "
SECOND = "and the fix is a one-line change to the parser."


class _Held(dict[str, Any]):
    """A wire server reply whose stream stops before its `held`-th event until `release` is set: the server asks
    its `gap` before each event, and is answered once the test lets it go on."""

    def __init__(self, reply: dict[str, Any], held: int, release: threading.Event) -> None:
        super().__init__(reply)
        self._held, self._release, self._asked = held, release, 0

    def get(self, key: str, default: Any = None) -> Any:
        if key != "gap":
            return super().get(key, default)
        self._asked += 1
        if self._asked == self._held:
            self._release.wait(30)
        return 0


def _now(app: Dashboard) -> str:
    table = app.query_one("#agents", DataTable)
    return str(table.get_cell("main", "now")) if "main" in app.agent_ids else ""


async def _until(pilot: Pilot[None], met: Callable[[], bool]) -> None:
    for _ in range(2000):
        if met():
            return
        await pilot.pause(0.01)
    raise AssertionError("the view never showed it")


def test_a_reply_streaming_in_shows_in_the_agents_row_then_clears(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    channel = Channel()
    release = threading.Event()
    finish = {"name": "finish", "arguments": {"summary": "fixed the parser"}}
    # chunks: role, the text's first half, its second half, the tool call...: held before the second half
    reply = _Held({"text": FIRST + SECOND, "tool_calls": [finish]}, held=3, release=release)

    async def scenario() -> tuple[str, str, str]:
        with WireServer([reply]) as server:
            model = OpenAIModel("openai:m", "m", api_key="k", base_url=server.openai_url, timeout=60.0)
            agent = Agent(
                log=RunLog(store, "r1"),
                agent_id="main",
                model=model,
                toolbox=Toolbox(tmp_path, LocalShell(), command_timeout=30, output_limit=4000),
                prices=PriceTable(),
                system="You are a test agent.",
                arriving=channel.arriving("r1", "main"),
            )
            app = Dashboard(EventFeed(RunLog(store, "r1")), poll_s=0.02, arriving=channel)
            async with app.run_test(size=(140, 30)) as pilot:
                work = asyncio.ensure_future(agent.run("fix the parser"))
                await _until(pilot, lambda: "writing" in _now(app))
                arriving = _now(app)
                logged = " ".join(e.model_dump_json() for e in store.events("r1"))
                release.set()
                result = await work
                await _until(pilot, lambda: app.view is not None and app.view.agents["main"].state != "running")
                after = _now(app)
            assert result.ok, result
        return arriving, logged, after

    try:
        arriving, logged, after = asyncio.run(scenario())
    finally:
        release.set()
    assert arriving.startswith("writing: …") and "the failing test," in arriving, arriving
    assert SECOND not in arriving
    assert "failing test" not in logged, "the partial reply is not logged"
    assert "writing" not in after and channel.tail("r1", "main") == ""
