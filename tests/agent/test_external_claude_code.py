"""The real Claude Code CLI as a worker, its model a local streaming server: what the log keeps of it, a resumed
attempt continuing its session, and a spent budget killing it."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from anthropic_stream import StreamServer
from plait.agent.budget import Budget, Limits
from plait.agent.external import ClaudeCodeWorker, Job
from plait.agent.external.claude_code import claude_env
from plait.agent.loop import AgentResult
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import AgentSession, AgentStopped, ModelCallFinished, ToolCalled, ToolReturned
from plait.workspace import LocalShell

pytestmark = pytest.mark.skipif(
    shutil.which("claude") is None,
    reason="Claude Code is not installed (npm install -g @anthropic-ai/claude-code; .ci/run installs it)",
)


def _writer(body: dict[str, Any]) -> dict[str, Any]:
    """Write notes.txt, then say so; a side request (no tools) gets text."""
    if not body.get("tools"):
        return {"text": "a title"}
    said = json.dumps(body["messages"])
    if "tool_result" not in said:
        path = str(Path.cwd() / "notes.txt")  # replaced below with the worktree's path
        return {"tool_calls": [{"name": "Write", "arguments": {"file_path": path, "content": "hi\n"}}]}
    return {"text": "wrote notes.txt", "usage": {"input_tokens": 50, "output_tokens": 7}}


def _in(worktree: Path, reply: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], Any]:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        out = reply(body)
        for call in out.get("tool_calls", []):
            call["arguments"]["file_path"] = str(worktree / "notes.txt")
        return out

    return answer


def _work(
    tmp_path: Path, store: SQLiteEventStore, reply: Callable[[dict[str, Any]], Any], **job: Any
) -> tuple[AgentResult, list[dict[str, Any]], Path]:
    worktree = tmp_path / "wt"
    worktree.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=worktree, check=True)
    with StreamServer(_in(worktree, reply)) as server:
        env = claude_env({"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key"})
        worker = ClaudeCodeWorker(
            Job(log=RunLog(store, "r1"), agent_id="t", attempt=1, runner=LocalShell(), worktree=worktree,
                system="You work for plait.", env=env, max_turns=5, **job)
        )  # fmt: skip
        result = asyncio.run(worker.run("Your task is `t`: write notes.txt."))
        return result, server.requests, worktree


@pytest.mark.usefixtures("git_env")
def test_its_turns_tool_calls_session_and_cost_are_logged(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    saw: list[bool] = []

    async def checkpoint() -> str:
        saw.append((tmp_path / "wt" / "notes.txt").exists())
        return "c0ffee"

    result, asked, worktree = _work(tmp_path, store, _writer, checkpoint=checkpoint)

    assert result.ok and result.summary == "wrote notes.txt", result
    assert saw == [True], "the worktree is saved once, after the Write"
    assert (worktree / "notes.txt").read_text() == "hi\n" and not (worktree / ".plait-agent").exists()
    events = list(store.events("r1"))
    assert [e.call.name for e in events if isinstance(e, ToolCalled)] == ["Write"]
    returned = [e for e in events if isinstance(e, ToolReturned)]
    assert len(returned) == 1 and not returned[0].is_error and returned[0].checkpoint == "c0ffee"
    turns = [e for e in events if isinstance(e, ModelCallFinished) and e.response.model != "claude-code"]
    assert sum(t.response.usage.output_tokens for t in turns) == 5 + 7
    assert [d for d in events if isinstance(d, AgentSession) and d.session]
    stopped = next(e for e in events if isinstance(e, AgentStopped))
    assert stopped.reason == "finished" and stopped.cost_usd > 0
    brief = json.dumps([b for b in asked if b.get("tools")][0])
    assert "You work for plait." in brief and "Your task is `t`" in brief


@pytest.mark.usefixtures("git_env")
def test_a_resumed_attempt_continues_its_logged_session(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    _work(tmp_path, store, _writer)  # the first process's attempt, which got as far as its session

    def again(body: dict[str, Any]) -> dict[str, Any]:
        return {"text": "resumed"} if body.get("tools") else {"text": "a title"}

    result, asked, _ = _work(tmp_path, store, again)
    assert result.ok and result.summary == "resumed"
    history = json.dumps([b for b in asked if b.get("tools")][0]["messages"])
    assert "wrote notes.txt" in history, "the resumed session carries the first process's conversation"


@pytest.mark.usefixtures("git_env")
def test_a_lost_session_starts_afresh(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    logged = {"session": "00000000-0000-4000-8000-000000000000", "attempt": 1, "cli": "claude-code"}
    store.append(AgentSession(run_id="r1", agent="t", decision="a session", **logged))
    result, _, worktree = _work(tmp_path, store, _writer)
    assert result.ok and (worktree / "notes.txt").exists()
    lost = [e for e in store.events("r1") if isinstance(e, AgentSession) and e.lost]
    assert len(lost) == 1


@pytest.mark.usefixtures("git_env")
def test_a_spent_budget_kills_it_and_stops_the_task(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")

    def costly(body: dict[str, Any]) -> dict[str, Any]:
        if not body.get("tools"):
            return {"text": "a title"}
        # each turn takes a second of the model's time: the CLI's Bash may return at once, and five quick turns
        # could all be written before the worker's next look at its output (every 0.2 s) saw the first one's usage
        time.sleep(1.0)
        return {
            "tool_calls": [{"name": "Bash", "arguments": {"command": "sleep 3; echo more"}}],
            "usage": {"input_tokens": 5000},
        }

    budget = Budget("t", Limits(tokens=1000), RunLog(store, "r1"))
    result, asked, _ = _work(tmp_path, store, costly, budget=budget)
    assert result.reason == "budget" and "1000" in result.summary, result
    assert len([b for b in asked if b.get("tools")]) < 5, "killed long before its turns ran out"
    assert next(e for e in store.events("r1") if isinstance(e, AgentStopped)).reason == "budget"
