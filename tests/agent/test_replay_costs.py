"""What a resumed agent's replay costs, counted rather than timed: how often a reply's text is redacted, how often
the tool set is asked for its tools."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.agent._replaying import ReplayingModel
from plait.agent.journal import ModelCallJournal
from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.agent.toolset import ToolOutcome
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall, ToolSpec, Usage, UserMessage
from plait.models import FunctionModel, PriceTable
from plait.redact import REDACTED, Redactor
from plait.workspace import LocalShell, Repo

SECRET = "Zq8mN3xW7pL2vK9tR4yB6cJ1"


class CountingRedactor(Redactor):
    """A redactor that counts the texts it is handed."""

    def __init__(self) -> None:
        super().__init__([SECRET], env={})
        self.calls = 0

    def __call__(self, text: str) -> str:
        self.calls += 1
        return super().__call__(text)


def _reply(text: str) -> ModelResponse:
    args = {"path": "a.py", "start_line": 1, "end_line": 9, "note": text}
    usage = Usage(input_tokens=10, output_tokens=5)
    return ModelResponse(text=text, tool_calls=(ToolCall.parse("c1", "read_file", args),), usage=usage)


def _answer(tmp_path: Path, reply: ModelResponse) -> tuple[ModelResponse, int]:
    redact = CountingRedactor()
    journal = ModelCallJournal(RunLog(SQLiteEventStore(tmp_path / "events.db"), "r"), "a", PriceTable())
    model = ReplayingModel(FunctionModel(lambda _: reply), journal, redact=redact)
    request = ModelRequest(system="s", messages=(UserMessage(text="go"),), max_output_tokens=10)
    response, _ = asyncio.run(model.complete(request))
    return response, redact.calls


def test_a_reply_without_a_secret_is_looked_at_in_one_pass(tmp_path: Path) -> None:
    reply = _reply("nothing to hide")
    response, calls = _answer(tmp_path, reply)
    assert response is reply
    assert calls == 1


def test_a_reply_with_a_secret_is_still_redacted(tmp_path: Path) -> None:
    response, _ = _answer(tmp_path, _reply(f"the key is {SECRET}"))
    assert response.text == f"the key is {REDACTED}"
    assert response.tool_calls[0].arguments == {"path": "a.py", "start_line": 1, "end_line": 9, "note": response.text}


class CountingTools:
    """A tool set that counts how often it is asked for its tools."""

    def __init__(self, inner: Toolbox) -> None:
        self.inner = inner
        self.asked = 0

    def specs(self) -> tuple[ToolSpec, ...]:
        self.asked += 1
        return self.inner.specs()

    async def execute(self, call: ToolCall) -> ToolOutcome:
        return await self.inner.execute(call)


class Crash(BaseException):
    """Stands for the process dying."""


def test_a_replay_asks_for_the_tools_once_not_at_every_step(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")

    def reply(request: ModelRequest) -> ModelResponse:
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if turn == 10:
            raise Crash
        return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "read_file", {"path": "calc.py"}),))

    def agent(model: FunctionModel) -> tuple[Agent, CountingTools]:
        tools = CountingTools(Toolbox(repo.root, LocalShell()))
        made = Agent(log=RunLog(store, "r"), agent_id="a", model=model, toolbox=tools, prices=PriceTable(), system="s")
        return made, tools

    first, _ = agent(FunctionModel(reply))
    with pytest.raises(Crash):
        asyncio.run(first.run("task"))

    done = ModelResponse(tool_calls=(ToolCall.parse("end", "finish", {"summary": "ok"}),))
    again, tools = agent(FunctionModel(lambda _: done))
    assert asyncio.run(again.run("task")).ok
    assert again.journal.replayed == 10
    assert tools.asked == 3  # the prompt's names, the replay's ten steps, the live step
