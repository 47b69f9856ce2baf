"""A reply with more tool calls than an agent runs at once: the first ones run, the model is told of the rest,
and a resumed agent rebuilds the same conversation from the log."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plait.agent.loop import Agent, AgentLimits
from plait.agent.tools import Toolbox
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall, ToolResultMessage, UserMessage
from plait.models import FunctionModel, PriceTable
from plait.workspace import LocalShell, Repo

MADE = 1000


def _reply(request: ModelRequest) -> ModelResponse:
    if not any(isinstance(m, AssistantMessage) for m in request.messages):
        calls = tuple(ToolCall.parse(f"c{i}", "list_files", {}) for i in range(MADE))
        return ModelResponse(tool_calls=calls)
    return ModelResponse(tool_calls=(ToolCall.parse("end", "finish", {"summary": "done"}),))


def _agent(root: Path, store: SQLiteEventStore, model: FunctionModel) -> Agent:
    return Agent(
        log=RunLog(store, "r"),
        agent_id="a",
        model=model,
        toolbox=Toolbox(root, LocalShell()),
        prices=PriceTable(),
        system="s",
        limits=AgentLimits(max_tool_calls=64),
    )


def test_a_reply_of_a_thousand_calls_runs_its_first_sixty_four_and_says_so(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    model = FunctionModel(_reply)

    first = _agent(repo.root, store, model)
    result = asyncio.run(first.run("look around"))

    assert result.ok
    second = model.calls[1].messages
    said = [m for m in second if isinstance(m, AssistantMessage)][0]
    assert len(said.tool_calls) == 64 and [c.id for c in said.tool_calls] == [f"c{i}" for i in range(64)]
    assert sum(isinstance(m, ToolResultMessage) for m in second) == 64
    notice = second[-1]
    assert isinstance(notice, UserMessage) and "made 1,000 tool calls: only the first 64 were run" in notice.text

    resumed = FunctionModel(_reply)
    again = _agent(repo.root, store, resumed)
    assert asyncio.run(again.run("look around")).ok
    assert resumed.calls == [], "the resumed agent read both answers back from the log"
    assert again.messages == first.messages, "and rebuilt the same conversation"
