"""An attempt interrupted at any point resumes from the log: nothing done twice, nothing paid twice."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from plait.agent._replay import AttemptRecord
from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events import NotesDelivered, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel, PriceTable
from plait.workspace import LocalShell, Repo, Worktree

STEPS = [
    ("write_file", {"path": "notes.txt", "content": "one\n"}),
    ("edit_file", {"path": "calc.py", "old": "a - b", "new": "a + b"}),
    ("run", {"command": "cat notes.txt >> log.txt"}),
    ("edit_file", {"path": "notes.txt", "old": "one", "new": "two"}),
    ("finish", {"summary": "done"}),
]


class Crash(BaseException):
    """Stands for the process dying: nothing after it runs."""


def _model(calls: Counter[int], crash_at: int | None) -> FunctionModel:
    def reply(request: ModelRequest) -> ModelResponse:
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if turn == crash_at:
            raise Crash
        calls[turn] += 1
        name, args = STEPS[turn]
        return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", name, args),))

    return FunctionModel(reply)


def _agent(worktree: Worktree, store: SQLiteEventStore, model: FunctionModel) -> Agent:
    ref = "refs/plait/checkpoints/r/main.1"
    state = {"last": worktree.base}

    async def checkpoint() -> str | None:
        sha = worktree.checkpoint(ref, state["last"])
        if sha:
            state["last"] = sha
        return sha

    return Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=model,
        toolbox=Toolbox(worktree.path, LocalShell()),
        prices=PriceTable(),
        system="s",
        checkpoint=checkpoint,
    )


@pytest.mark.parametrize("crash_at", [1, 2, 3, 4])
def test_a_resumed_attempt_ends_where_an_uninterrupted_one_does(repo: Repo, tmp_path: Path, crash_at: int) -> None:
    clean_tree = _uninterrupted(repo, tmp_path)
    store = SQLiteEventStore(tmp_path / "crash.db")
    path = tmp_path / "wt-crash"
    worktree = repo.add_worktree(path, "crash", repo.head())
    calls: Counter[int] = Counter()
    with pytest.raises(Crash):
        asyncio.run(_agent(worktree, store, _model(calls, crash_at)).run("task"))

    # a new process: the worktree is rebuilt at its last checkpoint, then the agent replays its log
    worktree.remove()
    worktree = repo.add_worktree(tmp_path / "wt-again", "crash-again", repo.head())
    last = AttemptRecord(RunLog(store, "r"), "main", 1).last_checkpoint
    if last:
        worktree.restore(last)
    result = asyncio.run(_agent(worktree, store, _model(calls, None)).run("task"))

    assert result.ok and result.steps == len(STEPS)
    assert all(n == 1 for n in calls.values()) and len(calls) == len(STEPS)  # no model call answered twice
    kinds = Counter(e.kind for e in store.events("r"))
    assert kinds["tool_call"] == kinds["tool_result"] == len(STEPS) and kinds["prompt"] == 1
    assert kinds["model_response"] == len(STEPS)
    assert worktree.commit_all("result") is not None
    assert repo.git("rev-parse", "HEAD^{tree}", cwd=worktree.path).strip() == clean_tree
    assert (worktree.path / "log.txt").read_text() == "one\n"  # the command ran once, not again on replay


def _uninterrupted(repo: Repo, tmp_path: Path) -> str:
    store = SQLiteEventStore(tmp_path / "clean.db")
    worktree = repo.add_worktree(tmp_path / "wt-clean", "clean", repo.head())
    assert asyncio.run(_agent(worktree, store, _model(Counter(), None)).run("task")).ok
    worktree.commit_all("result")
    return repo.git("rev-parse", "HEAD^{tree}", cwd=worktree.path).strip()


def test_a_note_posted_after_the_crash_waits_for_the_first_live_step(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "notes.db")
    worktree = repo.add_worktree(tmp_path / "wt-notes", "notes", repo.head())
    calls: Counter[int] = Counter()
    with pytest.raises(Crash):
        asyncio.run(_agent(worktree, store, _model(calls, 3)).run("task"))
    # the resumed process has a note for the agent before it replays steps 1-3, which were made without one
    again = _agent(worktree, store, _model(calls, None))
    pending = ["[integrated] from merge-queue:\nTask x is integrated."]
    again.notes = lambda: [pending.pop()] if pending else []
    result = asyncio.run(again.run("task"))
    assert result.ok, result.summary
    assert sorted(calls) == [0, 1, 2, 3, 4] and all(n == 1 for n in calls.values())  # no call answered twice
    delivered = [e for e in store.events("r", kinds=["notes_delivered"]) if isinstance(e, NotesDelivered)]
    assert [e.step for e in delivered] == [4]
    worktree.remove()
