"""An answer's append syncs in a worker thread: the other agents run meanwhile, and each agent's log keeps its order."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

from plait.agent.journal import ModelCallJournal
from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events import Event, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, UserMessage
from plait.models import PriceTable, ScriptedModel
from plait.workspace import LocalShell


class HeldStore:
    """A store whose append of agent `held`'s answer waits until `release` is set (as a slow sync would)."""

    def __init__(self, inner: SQLiteEventStore, held: str) -> None:
        self.inner, self.held = inner, held
        self.holding, self.release = threading.Event(), threading.Event()
        self.released_in_time: list[bool] = []
        """Per held append: whether the test let it go (not the fail-safe wait running out)."""

    def append(self, event: Event) -> Event:
        if event.agent == self.held and event.kind == "model_response":
            self.holding.set()
            self.released_in_time.append(self.release.wait(timeout=10))
        return self.inner.append(event)

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        return self.inner.events(run_id, agent=agent, kinds=kinds, after=after)

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def close(self) -> None:
        self.inner.close()


def _request(text: str) -> ModelRequest:
    return ModelRequest(system="sys", messages=(UserMessage(text=text),))


def test_another_agent_is_answered_and_logged_while_an_answer_syncs(tmp_path: Path) -> None:
    store = HeldStore(SQLiteEventStore(tmp_path / "e.db"), held="a")
    slow = ModelCallJournal(RunLog(store, "r"), "a", PriceTable())
    other = ModelCallJournal(RunLog(store, "r"), "b", PriceTable())

    async def both() -> list[str]:
        held = asyncio.ensure_future(slow.complete(ScriptedModel([{"text": "from a"}]), _request("qa")))
        await asyncio.to_thread(store.holding.wait, 10)  # a was answered; the answer is on its way to the log
        answer, _ = await other.complete(ScriptedModel([{"text": "from b"}]), _request("qb"))
        seen = [e.kind for e in store.events("r", agent="b")]
        store.release.set()
        await held
        return [answer.text, *seen]

    assert asyncio.run(both()) == ["from b", "model_request", "model_response"]
    assert store.released_in_time == [True]
    assert [e.kind for e in store.events("r", agent="a")] == ["model_request", "model_response"]


def test_the_tool_calls_of_an_answer_run_only_once_it_is_logged(tmp_path: Path) -> None:
    store = HeldStore(SQLiteEventStore(tmp_path / "e.db"), held="a")
    root = tmp_path / "work"
    root.mkdir()
    writes = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}]}
    finish = {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}
    agent = Agent(
        log=RunLog(store, "r"),
        agent_id="a",
        model=ScriptedModel([writes, finish]),
        toolbox=Toolbox(root, LocalShell(), command_timeout=30, output_limit=4000),
        prices=PriceTable(),
        system="You are a test agent.",
    )

    async def run() -> bool:
        working = asyncio.ensure_future(agent.run("write a"))
        await asyncio.to_thread(store.holding.wait, 10)
        for _ in range(100):  # the loop turns; the answer is not logged, so its tool call must not run
            await asyncio.sleep(0)
        wrote_early = (root / "a.txt").exists()
        store.release.set()
        assert (await working).ok
        return wrote_early

    assert asyncio.run(run()) is False
    assert store.released_in_time == [True, True]
    kinds = [e.kind for e in store.events("r", agent="a")]
    assert kinds == [
        "prompt",
        "model_request",
        "model_response",
        "tool_call",
        "tool_result",
        "model_request",
        "model_response",
        "tool_call",
        "tool_result",
        "agent_stopped",
    ]
