"""A resumed agent counts what the live one counted: malformed replies logged before a crash still count."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.agent.loop import Agent, AgentLimits
from plait.agent.tools import Toolbox
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel, PriceTable
from plait.workspace import LocalShell, Repo


class Crash(BaseException):
    """Stands for the process dying: nothing after it runs, nothing is logged for it."""


def _agent(root: Path, store: SQLiteEventStore, crash_at: int | None) -> Agent:
    def reply(request: ModelRequest) -> ModelResponse:
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if turn == crash_at:
            raise Crash
        if turn < 3:
            return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "no_such_tool", {}),))
        return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "finish", {"summary": "too late"}),))

    return Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=FunctionModel(reply),
        toolbox=Toolbox(root, LocalShell()),
        prices=PriceTable(),
        system="s",
        limits=AgentLimits(max_format_errors=3),
    )


def test_a_resumed_agent_stops_after_as_many_malformed_replies_as_the_live_one(repo: Repo, tmp_path: Path) -> None:
    live = asyncio.run(_agent(repo.root, SQLiteEventStore(tmp_path / "live.db"), None).run("task"))
    assert live.reason == "format_errors" and live.steps == 3

    store = SQLiteEventStore(tmp_path / "crash.db")
    with pytest.raises(Crash):
        asyncio.run(_agent(repo.root, store, 2).run("task"))
    resumed = asyncio.run(_agent(repo.root, store, None).run("task"))

    assert (resumed.reason, resumed.steps) == (live.reason, live.steps)
