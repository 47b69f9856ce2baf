"""Resumed agents on one event loop replay their past one at a time: the first to reach a live call makes it
while the others are still replaying, instead of after all of them have."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from plait.agent._replaying import ReplayTurns
from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel, PriceTable
from plait.workspace import LocalShell, Repo

PAST = 12
"""Model calls each agent made before the crash."""


class _Inline:
    """The store, appending in the caller's thread as a store that takes no posts does (PostgreSQL's): an agent's
    appends then never wait on a writer thread, so what the other agent replays meanwhile is the turns' doing
    alone, not the threads' timing."""

    def __init__(self, store: SQLiteEventStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "post":
            raise AttributeError(name)
        return getattr(self._store, name)


class Crash(BaseException):
    """Stands for the process dying."""


def _turn(request: ModelRequest) -> int:
    return sum(isinstance(m, AssistantMessage) for m in request.messages)


def _read(turn: int) -> ModelResponse:
    return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "read_file", {"path": "calc.py"}),))


def _agent(root: Path, store: SQLiteEventStore, name: str, model: FunctionModel, turns: ReplayTurns | None) -> Agent:
    return Agent(
        log=RunLog(store, "r"),
        agent_id=name,
        model=model,
        toolbox=Toolbox(root, LocalShell()),
        prices=PriceTable(),
        system="s",
        turns=turns,
    )


def _crashing(request: ModelRequest) -> ModelResponse:
    if _turn(request) == PAST:
        raise Crash
    return _read(_turn(request))


@pytest.mark.parametrize("turns", [True, False])
def test_the_first_live_call_does_not_wait_for_every_replay(repo: Repo, tmp_path: Path, turns: bool) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    for name in ("a", "b"):
        with pytest.raises(Crash):
            asyncio.run(_agent(repo.root, store, name, FunctionModel(_crashing), None).run(f"task {name}"))

    seen: dict[str, int] = {}
    """Steps the other agent had read back when each agent's first live call was answered."""
    agents: dict[str, Agent] = {}

    def live(name: str, other: str) -> FunctionModel:
        async def answer(request: ModelRequest) -> ModelResponse:
            for _ in range(3):  # the round trips of a request
                await asyncio.sleep(0)
            seen.setdefault(name, agents[other].journal.replayed)
            return ModelResponse(tool_calls=(ToolCall.parse("end", "finish", {"summary": "done"}),))

        return FunctionModel(answer)

    async def resume() -> None:
        shared = ReplayTurns() if turns else None
        inline: Any = _Inline(store)
        agents["a"] = _agent(repo.root, inline, "a", live("a", "b"), shared)
        agents["b"] = _agent(repo.root, inline, "b", live("b", "a"), shared)
        results = await asyncio.gather(agents["a"].run("task a"), agents["b"].run("task b"))
        assert all(r.ok for r in results)

    asyncio.run(resume())
    assert [agents[n].journal.replayed for n in "ab"] == [PAST, PAST]  # nothing paid twice
    assert [len(agents[n].model.calls) for n in "ab"] == [1, 1]  # type: ignore[attr-defined]
    if turns:  # a's call went out after its own replay, while b had read back a step or three of its own
        assert seen["a"] < 5
    else:  # b's whole replay ran between two round trips of a's call
        assert seen["a"] == PAST
