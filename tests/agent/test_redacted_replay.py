"""A model reply holding a secret is redacted before the agent uses it, as before it is logged: the model never sees
the secret again, the log never holds it, and an agent resumed from that log asks exactly what the first one asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events.runlog import RunLog
from plait.events.store import RedactingStore, SQLiteEventStore
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel, PriceTable
from plait.redact import Redactor
from plait.workspace import LocalShell, Repo

KEY = "sk-proj-Abc123def456ghi789jkl012"
TOKEN = "Zq8mN3xW7pL2vK9tR4yB6cJ1"
"""Known to the redactor as a value (an environment variable, a configured key)."""


class Crash(BaseException):
    """Stands for the process dying."""


def _model(seen: list[str], crash_at: int | None = None) -> FunctionModel:
    """Says a secret, runs a command with it, looks at the result, finishes with the secret in its summary."""

    def reply(request: ModelRequest) -> ModelResponse:
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if turn == crash_at:
            raise Crash
        sent = request.model_dump_json()
        seen.append("the model saw the secret" if KEY in sent or TOKEN in sent else request.fingerprint())
        if turn == 0:
            call = ToolCall.parse("c0", "run", {"command": f"echo 'token {KEY}' > out.txt; echo {TOKEN}"})
            return ModelResponse(text=f"I will try {KEY} with {TOKEN}.", tool_calls=(call,))
        if turn == 1:
            return ModelResponse(tool_calls=(ToolCall.parse("c1", "read_file", {"path": "out.txt"}),))
        if turn == 2:
            return ModelResponse(tool_calls=(ToolCall.parse("c2", "run", {"command": "echo two"}),))
        return ModelResponse(tool_calls=(ToolCall.parse("c3", "finish", {"summary": f"done with {KEY}"}),))

    return FunctionModel(reply)


def _agent(root: Path, store: RedactingStore, model: FunctionModel) -> Agent:
    return Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=model,
        toolbox=Toolbox(root, LocalShell()),
        prices=PriceTable(),
        system="s",
    )


def _store(path: Path) -> RedactingStore:
    return RedactingStore(SQLiteEventStore(path), Redactor([TOKEN], env={}))


@pytest.mark.parametrize("crash_at", [1, 2, 3])
def test_an_agent_resumed_after_a_secret_asks_what_the_first_one_asked(
    repo: Repo, tmp_path: Path, crash_at: int
) -> None:
    task = f"Check the deploy key {TOKEN}."
    clean: list[str] = []
    wt = repo.add_worktree(tmp_path / "wt-clean", "clean", repo.head())
    assert asyncio.run(_agent(wt.path, _store(tmp_path / "clean.db"), _model(clean)).run(task)).ok

    db = tmp_path / "crash.db"
    seen: list[str] = []
    wt = repo.add_worktree(tmp_path / "wt-crash", "crash", repo.head())
    with pytest.raises(Crash):
        asyncio.run(_agent(wt.path, _store(db), _model(seen, crash_at)).run(task))
    resumed = asyncio.run(_agent(wt.path, _store(db), _model(seen)).run(task))  # a new process, the same log

    assert resumed.ok, resumed.summary
    assert resumed.summary == "done with [REDACTED]"
    assert seen == clean  # the same requests, each made once: the replayed part matched the log
    assert "the model saw the secret" not in seen
    assert (wt.path / "out.txt").read_text() == "token [REDACTED]\n"  # the command ran as it was logged
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("crash.db*"))
    assert KEY.encode() not in raw and TOKEN.encode() not in raw
