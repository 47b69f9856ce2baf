"""A resumed parallel run's first agent to replay makes its first new call without waiting for every other agent's
past to be read: by then the log has decoded the run's answers (for the budgets) and that agent's own past, not the
other agents' tool calls and results. Counted, not timed; real worktrees, git and log, only the model is scripted.

The worktrees but the first are held (a `git` first on PATH waits before making them) until the first new call, so
that what the count sees does not depend on how fast the machine makes worktrees."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest

from counting_store import CountingStore
from plait.agent.budget import Budget, Limits
from plait.agent.journal import REPLAYED
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.integrate import DirectIntegrator
from plait.run.parallel import PlanContext, run_plan
from plait.run.state import load_state
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

RUN = "r1"
TASKS = ("t0", "t1", "t2")
ANSWERED = 18
"""Model calls answered before the first process is stopped: six per agent."""
_TASK = re.compile(r"Your task is `([^`]+)`")


def _agent(request: ModelRequest) -> str:
    text = " ".join(m.text for m in request.messages if isinstance(m, UserMessage))
    found = _TASK.search(text)
    return found.group(1) if found else "?"


def _reading(request: ModelRequest) -> ModelResponse:
    turn = sum(1 for m in request.messages if m.kind == "assistant")
    call = ToolCall(id=f"c{turn}", name="read_file", arguments={"path": "alpha.py"})
    return ModelResponse(text=f"step {turn}", tool_calls=(call,))


async def _until(run: PlanContext, plan: Plan, stop: asyncio.Event) -> None:
    """Run the plan until `stop` is set, then stop it as Ctrl-C does."""
    work = asyncio.ensure_future(run_plan(run, plan, DirectIntegrator(run.base.commit, "main")))
    waiting = asyncio.ensure_future(stop.wait())
    await asyncio.wait([work, waiting], return_when=asyncio.FIRST_COMPLETED)
    work.cancel()
    waiting.cancel()
    await asyncio.gather(work, waiting, return_exceptions=True)


def _context(repo: Repo, log: RunLog, model: FunctionModel, **more: object) -> PlanContext:
    settings = Settings(concurrency=3, max_attempts=1, radar_interval=0, max_steps=1000)
    return PlanContext(
        repo=repo,
        settings=settings,
        model=model,
        log=log,
        base=RunBase(repo.head(), "main"),
        runners=lambda path, agent, env: LocalShell(),
        budget=Budget("run", Limits(), log),
        coordinated=False,
        **more,  # type: ignore[arg-type]
    )


def _hold_worktrees(shim: Path, released: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git` that makes the first worktree asked for at once, and the others once `released` exists (a layered
    worktree is held at its branch, its last git command)."""
    shim.mkdir()
    real = shutil.which("git")
    script = f"""#!/bin/sh
case "$*" in
  *"worktree add"*|*"branch --force --no-track"*)
    mkdir {shim}/first 2>/dev/null || while [ ! -e {released} ]; do sleep 0.02; done ;;
esac
exec {real} "$@"
"""
    (shim / "git").write_text(script)
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")


def test_the_first_new_call_of_a_resumed_run_waits_for_no_other_agents_past(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = [PlanTask(id=t, title=t, instructions=f"Your task is `{t}`.", writes=[f"{t}.txt"]) for t in TASKS]
    plan = Plan(mode="parallel", reason="r", tasks=tasks)
    path = tmp_path / "events.db"
    first = SQLiteEventStore(path)
    answered = 0
    enough = asyncio.Event()

    async def work(request: ModelRequest) -> ModelResponse:
        nonlocal answered
        if answered >= ANSWERED:
            enough.set()
            await asyncio.Event().wait()  # held until the run is stopped
        answered += 1
        return _reading(request)

    async def first_process() -> None:
        await _until(_context(repo, RunLog(first, RUN), FunctionModel(work)), plan, enough)

    asyncio.run(first_process())
    everything = first.events(RUN)
    first.close()
    answers = [e for e in everything if e.kind == "model_response"]
    assert len(answers) == ANSWERED and {e.agent for e in answers} == set(TASKS)

    released = tmp_path / "released"
    _hold_worktrees(tmp_path / "shim", released, monkeypatch)
    store = CountingStore(SQLiteEventStore(path))  # a new process resumes the run
    log = RunLog(store, RUN)
    state = load_state(log)
    store.decoded = 0
    decoded_at_first_call: list[tuple[str, int]] = []
    live = asyncio.Event()

    async def resumed(request: ModelRequest) -> ModelResponse:
        decoded_at_first_call.append((_agent(request), store.decoded))
        released.touch()
        live.set()
        await asyncio.Event().wait()
        raise AssertionError("held until the run is stopped")

    async def second_process() -> None:
        await _until(_context(repo, log, FunctionModel(resumed), state=state), plan, live)

    asyncio.run(second_process())
    store.close()
    agent, decoded = decoded_at_first_call[0]
    replayed = [e for e in everything if e.kind in REPLAYED]
    own = [e for e in replayed if e.agent == agent and e.kind != "model_response"]
    others = [e for e in replayed if e.agent != agent and e.kind != "model_response"]
    assert others  # the other agents have a past of their own, which the first call did not wait for
    # its own events logged after the run's last answer are read once more; before, every agent's past was read first
    assert decoded <= len(answers) + 2 * len(own)
