"""A retry keeps good work: it starts on the integration head with the last attempt's work on top, and its brief
says what the worktree holds and what failed.

Real worktrees, git, pytest, merge queue and gate; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from integrators import git

from plait.events import Integrated, PromptGiven, SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel
from plait.plan_model import Plan, PlanTask
from plait.reconcile.gate import Gate
from plait.reconcile.ladder import default_resolvers
from plait.reconcile.queue import MergeQueue
from plait.run.base import RunBase
from plait.run.integrate import QueueIntegrator
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from plait.workspace.git import PLAIT_IDENTITY

RUN = "r1"
VERIFY = f'PYTHONPATH="$PWD" {sys.executable} -m pytest -q -p no:cacheprovider'
RETRY = "A previous attempt at this task failed"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for key, value in PLAIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    for name in ("alpha", "beta"):
        (root / f"{name}.py").write_text(f"def {name}():\n    return 0\n")
    (root / "tests" / "test_base.py").write_text("def test_base():\n    assert True\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return Repo.discover(root)


def _call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=(ToolCall.parse(f"c-{name}", name, arguments),))


def _first(request: ModelRequest) -> str:
    return next(m.text for m in request.messages if isinstance(m, UserMessage))


def _turn(request: ModelRequest) -> int:
    return sum(1 for m in request.messages if m.kind == "assistant")


def _run(repo: Repo, tmp_path: Path, plan: Plan, model: FunctionModel, verify: str, **settings: Any) -> ParallelOutcome:
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(repo.head(), "main")
    gate = Gate(repo, base=base.commit, log=RunLog(store, RUN), verify_command=verify)
    queue = MergeQueue(repo, RunLog(store, RUN), base.commit, gate=gate, resolvers=default_resolvers())
    values = {"concurrency": 2, "max_attempts": 2, "radar_interval": 0, "max_format_errors": 1, **settings}
    ctx = PlanContext(
        repo=repo,
        settings=Settings(**values),
        model=model,
        log=RunLog(store, RUN),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
        verify=verify,
    )
    try:
        return asyncio.run(run_plan(ctx, plan, QueueIntegrator(RunLog(store, RUN), lambda: queue)))
    finally:
        gate.close()


def _prompts(store: SQLiteEventStore, agent: str) -> list[str]:
    return [e.user for e in store.events(RUN, agent=agent, kinds=["prompt"]) if isinstance(e, PromptGiven)]


def _results(store: SQLiteEventStore, agent: str, tool: str) -> list[str]:
    events = store.events(RUN, agent=agent, kinds=["tool_result"])
    return [e.output for e in events if isinstance(e, ToolReturned) and e.name == tool]


def test_work_rejected_for_its_own_failing_test_is_fixed_not_redone(project: Repo, tmp_path: Path) -> None:
    test = "from alpha import alpha\n\n\ndef test_alpha():\n    assert alpha() == 42\n"

    async def answer(request: ModelRequest) -> ModelResponse:
        turn = _turn(request)
        if RETRY not in _first(request):  # attempt 1: the work, with an off-by-one its own test catches
            script = [
                _call("edit_file", path="alpha.py", old="return 0", new="return 41"),
                _call("write_file", path="tests/test_alpha.py", content=test),
                _call("finish", summary="alpha returns the answer"),
            ]
        else:  # attempt 2: the work is there; fix it
            script = [
                _call("read_file", path="alpha.py"),
                _call("edit_file", path="alpha.py", old="return 41", new="return 42"),
                _call("finish", summary="fixed the off-by-one"),
            ]
        return script[turn]

    plan = Plan(
        mode="parallel",
        reason="one task",
        tasks=[PlanTask(id="alpha", title="answer", instructions="alpha returns 42", writes=["alpha.py", "tests/**"])],
    )
    outcome = _run(project, tmp_path, plan, FunctionModel(answer), VERIFY)
    store = SQLiteEventStore(tmp_path / "events.db")

    assert outcome.results["alpha"].status == "done" and outcome.results["alpha"].attempts == 2
    retry = _prompts(store, "alpha")[1]
    head = project.head()  # nothing was integrated before the retry: it starts on the base
    assert f"Your worktree: the integration branch as it stands (commit {head[:10]}), with attempt 1's work" in retry
    assert "uncommitted changes, in alpha.py, tests/test_alpha.py. That work is done" in retry
    assert (
        "What failed:" in retry
        and "tests in test files it added or changed fail: tests/test_alpha.py::test_alpha" in retry
    )
    assert "return 41" in _results(store, "alpha", "read_file")[0]  # the worktree held attempt 1's work
    assert git(project.root, "show", f"{outcome.branch}:alpha.py") == "def alpha():\n    return 42"
    assert git(project.root, "show", f"{outcome.branch}:tests/test_alpha.py") == test.rstrip("\n")
    # attempt 2's branch is one clean commit on the head it started from, holding the whole of the work
    assert git(project.root, "log", "--format=%s", f"{head}..plait/{RUN}/alpha.2") == "answer"


def test_work_rejected_for_a_conflict_is_brought_onto_the_head_with_the_conflict_marked(
    project: Repo, tmp_path: Path
) -> None:
    """beta also changed alpha.py's line that alpha changed; alpha got in first, so beta conflicted."""

    async def answer(request: ModelRequest) -> ModelResponse:
        turn, first = _turn(request), _first(request)
        if "Your task is `alpha`" in first:
            script = [_call("edit_file", path="alpha.py", old="return 0", new="return 1"), _call("finish", summary="1")]
            return script[turn]
        if RETRY not in first:
            if turn == 2:  # finish only once alpha is in, so that beta lands second
                store = SQLiteEventStore(tmp_path / "events.db")
                try:
                    for _ in range(2000):
                        if any(isinstance(e, Integrated) and e.tasks for e in store.events(RUN)):
                            break
                        await asyncio.sleep(0.01)
                finally:
                    store.close()
            script = [
                _call("edit_file", path="beta.py", old="return 0", new="return 5"),
                _call("edit_file", path="alpha.py", old="return 0", new="return 2"),
                _call("finish", summary="beta returns 5; alpha 2"),
            ]
            return script[turn]
        script = [
            _call("read_file", path="alpha.py"),
            _call("write_file", path="alpha.py", content="def alpha():\n    return 1\n"),
            _call("finish", summary="kept alpha's value"),
        ]
        return script[turn]

    plan = Plan(
        mode="parallel",
        reason="two modules",
        tasks=[
            PlanTask(id="alpha", title="alpha", instructions="alpha returns 1", writes=["alpha.py"]),
            PlanTask(id="beta", title="beta", instructions="beta returns 5", writes=["beta.py"]),
        ],
    )
    outcome = _run(project, tmp_path, plan, FunctionModel(answer), "true", leases=False)
    store = SQLiteEventStore(tmp_path / "events.db")

    assert outcome.results["beta"].status == "done" and outcome.results["beta"].attempts == 2
    retry = _prompts(store, "beta")[1]
    assert "did not get in" not in retry and "conflicts no rung could resolve in alpha.py" in retry
    assert "with attempt 1's work on top as uncommitted changes, in alpha.py, beta.py" in retry
    assert "changed the same lines of alpha.py: those files hold conflict markers" in retry
    shown = _results(store, "beta", "read_file")[0]
    assert "<<<<<<<" in shown and "return 1" in shown and "return 2" in shown
    # beta.py was kept from attempt 1, never written again
    assert git(project.root, "show", f"{outcome.branch}:beta.py") == "def beta():\n    return 5"
    assert git(project.root, "show", f"{outcome.branch}:alpha.py") == "def alpha():\n    return 1"
