"""The replaying model and tool set journal any driver, not only the built-in loop.

A driver of its own (as a remote worker or another agent could be) asks a model and runs tools through them;
run again after it died, it gets back what the first process was answered and what its tools returned,
without paying the model or running a tool again, and carries on live from where the log ends.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.agent._replay import AttemptRecord
from plait.agent._replaying import ReplayingModel, ReplayingTools
from plait.agent.journal import ModelCallJournal
from plait.agent.tools import Toolbox
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.store import redaction
from plait.events.types import ModelCallFinished, ToolCalled, ToolReturned
from plait.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from plait.models import FunctionModel, PriceTable
from plait.workspace import LocalShell, Repo

COMMANDS = ["echo one >> log.txt", "echo two >> log.txt", "echo three >> log.txt"]


class Crash(BaseException):
    """Stands for the process dying: nothing after it runs."""


def _model(asked: list[int], crash_at: int | None) -> FunctionModel:
    def reply(request: ModelRequest) -> ModelResponse:
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if turn == crash_at:
            raise Crash
        asked.append(turn)
        return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "run", {"command": COMMANDS[turn]}),))

    return FunctionModel(reply)


async def _drive(root: Path, store: SQLiteEventStore, model: FunctionModel) -> list[Message]:
    """A driver of its own: one run command per model call, three calls."""
    past = AttemptRecord(RunLog(store, "r"), "worker", 1)
    journal = ModelCallJournal(RunLog(store, "r"), "worker", PriceTable(), 1, answered=past.answers)
    asking = ReplayingModel(model, journal, redact=redaction(store))
    tools = ReplayingTools(Toolbox(root, LocalShell()), past, RunLog(store, "r"), agent="worker", attempt=1)
    messages: list[Message] = [UserMessage(text="go")]
    for step in range(1, len(COMMANDS) + 1):
        request = ModelRequest(system="s", messages=tuple(messages), tools=tools.specs())
        response, _ = await asking.complete(request)
        messages.append(response.as_message())
        for call in response.tool_calls:
            outcome = await tools.execute(call, step=step)
            messages.append(ToolResultMessage(call_id=call.id, name=call.name, content=outcome.output))
    return messages


@pytest.mark.parametrize("crash_at", [1, 2])
def test_a_driver_resumed_through_the_replaying_seams_does_nothing_twice(
    repo: Repo, tmp_path: Path, crash_at: int
) -> None:
    live_asked: list[int] = []
    live = asyncio.run(_drive(repo.root, SQLiteEventStore(tmp_path / "live.db"), _model(live_asked, None)))
    (repo.root / "log.txt").unlink()

    store = SQLiteEventStore(tmp_path / "crash.db")
    asked: list[int] = []
    with pytest.raises(Crash):
        asyncio.run(_drive(repo.root, store, _model(asked, crash_at)))
    resumed = asyncio.run(_drive(repo.root, store, _model(asked, None)))

    assert resumed == live
    assert sorted(asked) == [0, 1, 2]  # each call paid once
    assert (repo.root / "log.txt").read_text() == "one\ntwo\nthree\n"  # each command run once
    events = store.events("r", agent="worker")
    assert sum(isinstance(e, ModelCallFinished) for e in events) == 3
    assert sum(isinstance(e, ToolCalled) for e in events) == sum(isinstance(e, ToolReturned) for e in events) == 3
