"""Parallel runs end to end: real worktrees, real git, the real agent loop; only the model is scripted."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from integrators import MergeTreeIntegrator, git

from plait.agent.budget import Budget, Limits
from plait.events import ModelCallStarted, SQLiteEventStore, TaskFinished, TaskStarted
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo


def _edit(name: str, value: int) -> dict[str, str]:
    return {"path": f"{name}.py", "old": "return 0", "new": f"return {value}"}


def _edit_task(name: str, value: int, *, delay: float = 0.05) -> dict[str, Any]:
    return {
        "name": name,
        "match": f"Your task is `{name}`",
        "turns": [
            {"delay": delay, "tool_calls": [{"name": "read_file", "arguments": {"path": f"{name}.py"}}]},
            {
                "delay": delay,
                "expect": "return 0",
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {"path": f"{name}.py", "old": "return 0", "new": f"return {value}"},
                    }
                ],
            },
            {"delay": delay, "tool_calls": [{"name": "finish", "arguments": {"summary": f"{name} returns {value}"}}]},
        ],
    }


def _failing_task(name: str) -> dict[str, Any]:
    return {"name": name, "match": f"Your task is `{name}`", "turns": [{"tool_calls": [{"name": "nope"}]}] * 3}


def _plan(*ids: str, deps: dict[str, list[str]] | None = None) -> Plan:
    deps = deps or {}
    tasks = [
        PlanTask(
            id=i,
            title=f"change {i}",
            instructions=f"Make {i} return a new value.",
            writes=[f"{i}.py"],
            depends_on=deps.get(i, []),
        )
        for i in ids
    ]
    return Plan(mode="parallel", reason="independent modules", tasks=tasks)


def _run(
    repo: Repo, tmp_path: Path, plan: Plan, model: ScriptedModel, **settings: Any
) -> tuple[ParallelOutcome, SQLiteEventStore, MergeTreeIntegrator]:
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(repo.head(), "main")
    integrator = MergeTreeIntegrator(repo, "r1", base.commit)
    limits = Limits(usd=settings.pop("run_max_usd", None))
    ctx = PlanContext(
        repo=repo,
        settings=Settings(**{"max_format_errors": 3, **settings}),
        model=model,
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
        budget=Budget("run", limits, RunLog(store, "r1")),
    )
    return asyncio.run(run_plan(ctx, plan, integrator)), store, integrator


def test_independent_tasks_run_at_once_each_on_its_own_branch(repo: Repo, tmp_path: Path) -> None:
    model = ScriptedModel(conversations=[_edit_task("alpha", 1), _edit_task("beta", 2), _edit_task("gamma", 3)])
    outcome, store, integrator = _run(repo, tmp_path, _plan("alpha", "beta", "gamma"), model, concurrency=3)

    model.assert_complete()
    assert outcome.status == "done" and all(r.status == "done" for r in outcome.results.values())
    for name, value in (("alpha", 1), ("beta", 2), ("gamma", 3)):
        assert f"return {value}" in git(repo.root, "show", f"plait/r1/{name}:{name}.py")
        assert f"return {value}" in git(repo.root, "show", f"{integrator.branch}:{name}.py")
    # the agents' model calls interleave in the log: they ran at the same time
    order = [e.agent for e in store.events("r1") if isinstance(e, ModelCallStarted)]
    first_finish = min(max(i for i, a in enumerate(order) if a == name) for name in ("alpha", "beta", "gamma"))
    assert len(set(order[: first_finish + 1])) == 3
    assert git(repo.root, "status", "--porcelain") == "" and git(repo.root, "worktree", "list").count("\n") == 0


def test_a_task_waits_for_its_dependency_and_starts_from_the_integrated_result(repo: Repo, tmp_path: Path) -> None:
    model = ScriptedModel(conversations=[_edit_task("alpha", 1), _edit_task("beta", 2)])
    outcome, store, integrator = _run(repo, tmp_path, _plan("alpha", "beta", deps={"beta": ["alpha"]}), model)
    assert outcome.status == "done" and integrator.order == ["alpha", "beta"]
    beta_start = next(e for e in store.events("r1") if isinstance(e, TaskStarted) and e.agent == "beta")
    assert "return 1" in git(repo.root, "show", f"{beta_start.base_commit}:alpha.py")


def test_a_task_that_keeps_failing_is_dropped_and_the_others_finish(repo: Repo, tmp_path: Path) -> None:
    model = ScriptedModel(conversations=[_edit_task("alpha", 1), _failing_task("beta"), _edit_task("gamma", 3)])
    outcome, store, integrator = _run(repo, tmp_path, _plan("alpha", "beta", "gamma"), model, max_attempts=2)
    assert outcome.results["beta"].status == "dropped" and outcome.results["beta"].attempts == 2
    assert "format_errors" in outcome.dropped["beta"]
    assert sorted(integrator.order) == ["alpha", "gamma"]
    finished = [(e.agent, e.status) for e in store.events("r1") if isinstance(e, TaskFinished)]
    assert ("beta", "dropped") in finished and finished.count(("beta", "failed")) == 2
    started = [e for e in store.events("r1") if isinstance(e, TaskStarted) and e.agent == "beta"]
    assert [e.attempt for e in started] == [1, 2] and started[1].branch == "plait/r1/beta.2"
    retry_prompt = [e for e in store.events("r1", agent="beta", kinds=["prompt"])][1]
    assert "A previous attempt at this task failed" in retry_prompt.user  # type: ignore[union-attr]


def test_a_run_budget_stops_the_run(repo: Repo, tmp_path: Path) -> None:
    from plait.models.pricing import Price

    model = ScriptedModel(conversations=[_edit_task("alpha", 1), _edit_task("beta", 2)])
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(repo.head(), "main")
    ctx = PlanContext(
        repo=repo,
        settings=Settings(concurrency=1),
        model=model,
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
        prices=__import__("plait.models", fromlist=["PriceTable"]).PriceTable(
            {"scripted:inline": Price(input=10_000.0, output=10_000.0)}
        ),
        budget=Budget("run", Limits(usd=2.0), RunLog(store, "r1")),
    )
    outcome = asyncio.run(run_plan(ctx, _plan("alpha", "beta"), MergeTreeIntegrator(repo, "r1", base.commit)))
    assert outcome.status == "failed" or outcome.dropped
    stops = [e for e in store.events("r1", kinds=["decision"]) if getattr(e, "topic", "") == "budget"]
    assert any(e.data["level"] == "stop" for e in stops)  # type: ignore[union-attr]
    assert all(r.attempts <= 1 for r in outcome.results.values())  # a spent budget is not retried
