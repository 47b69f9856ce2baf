"""A first attempt's agent asks its model while its worktree is made: the making is off the critical path, and its
tools wait for the worktree (a file the agent writes is not checked out over)."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from integrators import MergeTreeIntegrator

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

# git's checkout of a new worktree's files (a layered worktree's: of the run's shared checkout, before the mount)
# waits until the model has been asked (at most 20 s)
_WRAPPER = """#!/bin/bash
case " $* " in
  *" reset --hard "*|*" checkout-index -a "*) for _ in $(seq 400); do [ -e "{go}" ] && break; sleep 0.05; done ;;
esac
exec "{git}" "$@"
"""


def _call(name: str, **arguments: str) -> ModelResponse:
    return ModelResponse(tool_calls=(ToolCall(id=f"c-{name}", name=name, arguments=arguments),))


@pytest.mark.parametrize("layered", [True, False])
def test_the_first_model_call_goes_out_before_the_worktree_is_made(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layered: bool
) -> None:
    go, real = tmp_path / "asked", shutil.which("git")
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(_WRAPPER.format(go=go, git=real))
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    checked_out: list[bool] = []
    worktree = repo.plait_dir() / "worktrees" / "r1" / "alpha"

    def answer(request: ModelRequest) -> ModelResponse:
        if not checked_out:
            checked_out.append((worktree / "beta.py").exists())
            go.touch()
            return _call("write_file", path="alpha.py", content="def alpha():\n    return 1\n")
        return _call("finish", summary="alpha returns 1")

    store = SQLiteEventStore(tmp_path / "events.db")
    outcome = _alpha(repo, store, answer, layered=layered)

    assert outcome.status == "done", outcome.results
    assert checked_out == [False], "the model was asked only once the worktree's files were checked out"
    assert repo.git("show", f"{outcome.commit}:alpha.py") == "def alpha():\n    return 1\n"
    store.close()


def test_a_worktree_that_cannot_be_made_fails_the_attempt_at_its_first_tool_call(repo: Repo, tmp_path: Path) -> None:
    repo.git("branch", "plait/r1/alpha")  # in the way of the attempt's own branch
    asked: list[int] = []

    def answer(request: ModelRequest) -> ModelResponse:
        asked.append(1)
        return _call("write_file", path="alpha.py", content="def alpha():\n    return 1\n")

    store = SQLiteEventStore(tmp_path / "events.db")
    outcome = _alpha(repo, store, answer)

    assert outcome.results["alpha"].status == "dropped"
    assert "already exists" in outcome.results["alpha"].reason
    assert asked == [1]  # asked while the worktree was being made; its first tool call met the failure, and no more
    assert repo.git("show", "plait/r1/alpha:alpha.py") == "def alpha():\n    return 0\n"
    store.close()


def _alpha(
    repo: Repo, store: SQLiteEventStore, answer: Callable[[ModelRequest], ModelResponse], *, layered: bool = True
) -> ParallelOutcome:
    """Task alpha run alone, on one attempt, by a model answering with `answer`."""
    base = RunBase(repo.head(), "main")
    ctx = PlanContext(
        repo=repo,
        settings=Settings(concurrency=1, max_attempts=1, layered_worktrees=layered),
        model=FunctionModel(answer),
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
    )
    task = PlanTask(id="alpha", title="alpha", instructions="Make alpha return 1.", writes=["alpha.py"])
    plan = Plan(mode="parallel", reason="one", tasks=[task])
    return asyncio.run(run_plan(ctx, plan, MergeTreeIntegrator(repo, "r1", base.commit)))
