"""A resumed run makes again what a killed process left half made, and its agents ask what they asked before."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from integrators import MergeTreeIntegrator, git

from plait.agent.budget import Budget, Limits
from plait.events import SQLiteEventStore, TaskFinished, TaskStarted
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolResultMessage, UserMessage
from plait.models import FunctionModel, ScriptedModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.run.state import RunState, load_state
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

RUN = "r1"


def _edit_task(name: str, value: int, match: str = "") -> dict[str, Any]:
    edit = {"path": f"{name}.py", "old": "return 0", "new": f"return {value}"}
    return {
        "name": name,
        "match": match or f"Your task is `{name}`",
        "turns": [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": f"{name}.py"}}]},
            {"expect": "return 0", "tool_calls": [{"name": "edit_file", "arguments": edit}]},
            {"tool_calls": [{"name": "finish", "arguments": {"summary": f"{name} returns {value}"}}]},
        ],
    }


def _plan(*ids: str) -> Plan:
    tasks = [
        PlanTask(id=i, title=f"change {i}", instructions=f"Make {i} return a new value.", writes=[f"{i}.py"])
        for i in ids
    ]
    return Plan(mode="parallel", reason="independent modules", tasks=tasks)


def _context(repo: Repo, store: SQLiteEventStore, model: Any, state: RunState | None = None) -> PlanContext:
    return PlanContext(
        repo=repo,
        settings=Settings(max_format_errors=2, max_attempts=2, concurrency=1),
        model=model,
        log=RunLog(store, RUN),
        base=RunBase(repo.head(), "main"),
        runners=lambda path, agent, env: LocalShell(),
        budget=Budget("run", Limits(), RunLog(store, RUN)),
        state=state,
    )


def _resume(repo: Repo, db: Path, model: Any, plan: Plan) -> tuple[ParallelOutcome, SQLiteEventStore]:
    store = SQLiteEventStore(db)
    integrator = MergeTreeIntegrator(repo, f"{RUN}-resumed", repo.head())
    ctx = _context(repo, store, model, load_state(RunLog(store, RUN)))
    return asyncio.run(run_plan(ctx, plan, integrator)), store


def test_a_worktree_and_locked_branch_a_killed_process_left_are_made_again(repo: Repo, tmp_path: Path) -> None:
    # what a process killed after `git worktree add` (and while git held the branch's lock) leaves: a worktree,
    # its branch, a lock file on the branch, and no `task_started` in the log
    path = repo.plait_dir() / "worktrees" / RUN / "alpha"
    repo.add_worktree(path, f"plait/{RUN}/alpha", repo.head())
    lock = repo.common_dir / "refs" / "heads" / "plait" / RUN / "alpha.lock"
    lock.write_text("")
    db = tmp_path / "events.db"
    SQLiteEventStore(db).close()

    outcome, store = _resume(repo, db, ScriptedModel(conversations=[_edit_task("alpha", 1)]), _plan("alpha"))

    assert outcome.results["alpha"].status == "done"
    assert outcome.results["alpha"].attempts == 1, outcome.results["alpha"].failures  # no attempt spent on git
    started = [e for e in store.events(RUN) if isinstance(e, TaskStarted)]
    assert [(e.attempt, e.branch) for e in started] == [(1, f"plait/{RUN}/alpha")]
    assert "return 1" in git(repo.root, "show", f"plait/{RUN}/alpha:alpha.py")
    assert not lock.exists()
    assert git(repo.root, "worktree", "list").count("\n") == 0
    store.close()


def test_a_worktree_git_was_killed_making_is_made_again(repo: Repo) -> None:
    # git locks a worktree while it makes it; killed then, the lock stays, and its directory may be gone
    path = repo.plait_dir() / "worktrees" / RUN / "beta"
    made = repo.add_worktree(path, f"plait/{RUN}/beta", repo.head())
    admin = Path(repo.git("rev-parse", "--git-dir", cwd=made.path).strip())
    (admin / "locked").write_text("initializing")
    shutil.rmtree(path)

    again = repo.readd_worktree(path, f"plait/{RUN}/beta", repo.head(), owned=f"plait/{RUN}/")

    assert (again.path / "beta.py").exists() and again.head() == repo.head()
    assert git(repo.root, "worktree", "list").count("\n") == 1


def test_a_lock_on_a_branch_not_plaits_is_left_alone(repo: Repo) -> None:
    from plait.workspace._worktrees import clear_ref_lock

    lock = repo.common_dir / "refs" / "heads" / "main.lock"
    lock.write_text("")
    with pytest.raises(ValueError, match="not under"):
        clear_ref_lock(repo.common_dir, "main", owned=f"plait/{RUN}/")
    with pytest.raises(ValueError, match="not under"):
        clear_ref_lock(repo.common_dir, f"plait/{RUN}/../../main", owned=f"plait/{RUN}/")
    assert lock.exists()


def _retry_script() -> list[dict[str, Any]]:
    failing = {"name": "first", "match": "Your task is `beta`", "turns": [{"tool_calls": [{"name": "nope"}]}] * 2}
    return [_edit_task("beta", 2, match="A previous attempt at this task failed"), failing]


def test_a_retry_resumed_after_a_kill_is_told_what_it_was_told_before(repo: Repo, tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    store = SQLiteEventStore(db)
    scripted = ScriptedModel(conversations=_retry_script())
    reached = asyncio.Event()

    async def die_in_the_retry(request: ModelRequest) -> ModelResponse:
        first = next(m.text for m in request.messages if isinstance(m, UserMessage))
        if "A previous attempt" in first and sum(isinstance(m, AssistantMessage) for m in request.messages) == 1:
            reached.set()
            await asyncio.Event().wait()  # the process dies while the retry's second call is in flight
        return await scripted.complete(request)

    async def first() -> None:
        model = FunctionModel(die_in_the_retry, name=scripted.name)
        integrator = MergeTreeIntegrator(repo, RUN, repo.head())
        running = asyncio.ensure_future(run_plan(_context(repo, store, model), _plan("beta"), integrator))
        await reached.wait()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(first())
    store.close()

    model = ScriptedModel(conversations=_retry_script())
    outcome, store = _resume(repo, db, model, _plan("beta"))

    assert outcome.results["beta"].status == "done", outcome.results["beta"].reason
    prompts = [e.user for e in store.events(RUN, agent="beta", kinds=["prompt"])]  # type: ignore[attr-defined]
    assert len(prompts) == 2 and "A previous attempt" in prompts[1]
    assert sum(isinstance(m, AssistantMessage) for m in model.calls[0].messages) == 1  # the answered call was read back
    finished = [(e.status, e.reason) for e in store.events(RUN, agent="beta") if isinstance(e, TaskFinished)]
    assert [s for s, _ in finished] == ["failed", "interrupted", "done"], finished
    store.close()


def _twin_calls() -> list[dict[str, Any]]:
    """One reply with two tool calls under one id (some providers send that), then an edit and the finish."""
    reads = [{"id": "twin", "name": "read_file", "arguments": {"path": p}} for p in ("gamma.py", "alpha.py")]
    edit = {"path": "alpha.py", "old": "return 0", "new": "return 1"}
    return [
        {
            "name": "alpha",
            "match": "Your task is `alpha`",
            "turns": [
                {"tool_calls": reads},
                {"expect": "def alpha", "tool_calls": [{"name": "edit_file", "arguments": edit}]},
                {"tool_calls": [{"name": "finish", "arguments": {"summary": "alpha returns 1"}}]},
            ],
        }
    ]


def test_a_reply_with_two_calls_under_one_id_replays_after_a_kill(repo: Repo, tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    store = SQLiteEventStore(db)
    scripted = ScriptedModel(conversations=_twin_calls())
    reached = asyncio.Event()

    async def die_at_the_third_call(request: ModelRequest) -> ModelResponse:
        if sum(isinstance(m, AssistantMessage) for m in request.messages) == 2:
            reached.set()
            await asyncio.Event().wait()
        return await scripted.complete(request)

    async def first() -> None:
        model = FunctionModel(die_at_the_third_call, name=scripted.name)
        integrator = MergeTreeIntegrator(repo, RUN, repo.head())
        running = asyncio.ensure_future(run_plan(_context(repo, store, model), _plan("alpha"), integrator))
        await reached.wait()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(first())
    store.close()

    model = ScriptedModel(conversations=_twin_calls())
    outcome, store = _resume(repo, db, model, _plan("alpha"))

    assert outcome.results["alpha"].status == "done", outcome.results["alpha"].reason
    assert outcome.results["alpha"].attempts == 1, outcome.results["alpha"].failures
    assert len(model.calls) == 1  # the two answered calls were read back, each tool result where it was
    results = [m for m in model.calls[0].messages if isinstance(m, ToolResultMessage)]
    assert ["def gamma" in results[0].content, "def alpha" in results[1].content] == [True, True]
    assert "return 1" in git(repo.root, "show", f"plait/{RUN}/alpha:alpha.py")
    store.close()
