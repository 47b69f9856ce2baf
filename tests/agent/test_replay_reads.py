"""A resumed agent reads its past from the log once: one read builds what its model calls and tool calls replay."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events import Event, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel, PriceTable
from plait.workspace import LocalShell, Repo


class CountingStore:
    """An EventStore that counts its reads."""

    def __init__(self, inner: SQLiteEventStore) -> None:
        self.inner = inner
        self.reads = 0

    def append(self, event: Event) -> Event:
        return self.inner.append(event)

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        self.reads += 1
        return self.inner.events(run_id, agent=agent, kinds=kinds, after=after)

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def close(self) -> None:
        self.inner.close()


def _reply(request: ModelRequest) -> ModelResponse:
    turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
    if turn < 2:
        return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "read_file", {"path": "calc.py"}),))
    return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "finish", {"summary": "done"}),))


def _agent(root: Path, store: CountingStore) -> Agent:
    return Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=FunctionModel(_reply),
        toolbox=Toolbox(root, LocalShell()),
        prices=PriceTable(),
        system="s",
    )


def test_a_resumed_agent_reads_its_past_once(repo: Repo, tmp_path: Path) -> None:
    store = CountingStore(SQLiteEventStore(tmp_path / "events.db"))
    assert asyncio.run(_agent(repo.root, store).run("task")).ok

    store.reads = 0
    again = _agent(repo.root, store)
    assert store.reads == 1
    assert again.journal.answered(3) and not again.journal.answered(4)
