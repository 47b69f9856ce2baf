"""The real OpenCode CLI as a worker, its model the repo's local Chat Completions server: what the log keeps of it,
a failing model failing the attempt with the API's words, and a resumed attempt whose session is gone starting
afresh."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plait.agent.external import Job, OpenCodeWorker, make_worker
from plait.agent.external.opencode import opencode_env
from plait.agent.loop import AgentResult
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import AgentSession, AgentStopped, ModelCallFinished, ToolCalled, ToolReturned
from plait.workspace import LocalShell
from wire_server import Recorded, WireServer

pytestmark = [
    pytest.mark.skipif(
        shutil.which("opencode") is None,
        reason="OpenCode is not installed (npm install -g opencode-ai; .ci/run installs it)",
    ),
    pytest.mark.usefixtures("git_env"),
]


def _writer(worktree: Path) -> Any:
    """Write notes.txt with OpenCode's write tool, then say so."""

    def reply(fmt: str, body: dict[str, Any]) -> dict[str, Any]:
        assert fmt == "openai"
        said = json.dumps(body["messages"])
        if '"role": "tool"' not in said:
            arguments = {"filePath": str(worktree / "notes.txt"), "content": "hi\n"}
            return {"tool_calls": [{"name": "write", "arguments": arguments}], "usage": {"output_tokens": 9}}
        usage = {"input_tokens": 50, "output_tokens": 7, "cached_tokens": 20}
        return {"text": "wrote notes.txt", "usage": usage}

    return reply


def _work(tmp_path: Path, store: SQLiteEventStore, reply: Any) -> tuple[AgentResult, list[Recorded], Path]:
    worktree = tmp_path / "wt"
    worktree.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=worktree, check=True)
    with WireServer(reply(worktree) if reply is _writer else reply) as server:
        env = opencode_env(f"openai-compatible:m1@{server.openai_url}", {"OPENAI_API_KEY": "test-key"})
        job = Job(log=RunLog(store, "r1"), agent_id="t", attempt=1, runner=LocalShell(), worktree=worktree,
                  system="You work for plait.", env=env, model="openai-compatible:m1")  # fmt: skip
        worker = make_worker("opencode", job)
        assert isinstance(worker, OpenCodeWorker)
        result = asyncio.run(worker.run("Your task is `t`: write notes.txt."))
        return result, server.requests, worktree


def test_its_steps_tool_calls_session_and_usage_are_logged(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    result, asked, worktree = _work(tmp_path, store, _writer)

    assert result.ok and result.summary == "wrote notes.txt", result
    assert (worktree / "notes.txt").read_text() == "hi\n"
    assert not (worktree / ".plait-agent").exists(), "its config, home and prompt are removed"
    assert len(asked) == 2, "two steps, and no call to name the session"
    assert all(r.headers["authorization"] == "Bearer test-key" and r.body["model"] == "m1" for r in asked)
    said = json.dumps(asked[0].body["messages"])
    assert "You work for plait." in said and "Your task is `t`" in said

    events = list(store.events("r1", agent="t"))
    turns = [e for e in events if isinstance(e, ModelCallFinished)]
    assert [t.response.text for t in turns] == ["", "wrote notes.txt"]
    assert turns[1].response.usage.input_tokens == 50 and turns[1].response.usage.cached_tokens == 20
    assert turns[0].response.usage.output_tokens == 9
    called = [e.call for e in events if isinstance(e, ToolCalled)]
    assert [c.name for c in called] == ["write"] and called[0].arguments["content"] == "hi\n"
    returned = [e for e in events if isinstance(e, ToolReturned)]
    assert [(r.name, r.is_error) for r in returned] == [("write", False)]
    sessions = [e for e in events if isinstance(e, AgentSession)]
    assert len(sessions) == 1 and sessions[0].session.startswith("ses_")
    stopped = next(e for e in events if isinstance(e, AgentStopped))
    assert stopped.reason == "finished" and stopped.steps == 2 and stopped.usage.output_tokens == 16


def test_a_model_error_fails_the_attempt_with_the_apis_words(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    result, _, _ = _work(tmp_path, store, lambda fmt, body: {"status": 400, "message": "no such model m1"})

    assert result.reason == "model_error" and "no such model m1" in result.summary, result
