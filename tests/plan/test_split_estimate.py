"""Whether a split pays for itself: the estimate of its tokens and time, and the mode it decides."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from plan_helpers import make_repo

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel, PriceTable, ScriptedModel
from plait.plan import make_plan
from plait.plan._areamap import RepoIndex
from plait.plan._decision import choose_mode, estimate_split
from plait.plan_model import Plan, PlanTask
from plait.workspace import LocalShell

CLAUDE = (0.1, 1.25)
"""Anthropic's cache read and write, as parts of the input price."""
TASK = "Improve the four engines of the package, each with its tests."


def _module(name: str, functions: int) -> str:
    body = "\n".join(f"def {name}_{i}(value: int) -> int:\n    return value * {i} + {i}\n\n" for i in range(functions))
    return f'"""The {name} module."""\n\n{body}'


def _separate() -> dict[str, str]:
    """Four engines of five large modules each, none importing another's."""
    files = {"README.md": "# engines\n"}
    for engine in ("alpha", "beta", "gamma", "delta"):
        for part in ("parse", "plan", "run", "report", "store"):
            files[f"{engine}/{part}.py"] = _module(f"{engine}_{part}", 400)
    return files


def _entangled() -> dict[str, str]:
    """Four tiny modules that each build on one large core module."""
    files = {"core.py": _module("core", 1500)}
    for engine in ("alpha", "beta", "gamma", "delta"):
        files[f"{engine}.py"] = f"from core import core_1\n\n\ndef {engine}() -> int:\n    return core_1(1)\n"
    return files


def _task(task_id: str, writes: list[str], reads: list[str] | None = None, after: str = "") -> PlanTask:
    return PlanTask(
        id=task_id,
        title=f"improve {task_id}",
        instructions=f"Improve {task_id} and test it.",
        writes=writes,
        reads=reads or [],
        depends_on=[after] if after else [],
    )


def _engines_plan(per_engine: dict[str, list[str]], chain: bool = False) -> Plan:
    names = list(per_engine)
    tasks = [_task(n, w, after=names[i - 1] if chain and i else "") for i, (n, w) in enumerate(per_engine.items())]
    return Plan(mode="parallel", reason="four engines, four agents", tasks=tasks)


def _separate_plan(chain: bool = False) -> Plan:
    engines = ("alpha", "beta", "gamma", "delta")
    return _engines_plan({e: [f"{e}/*.py", f"tests/test_{e}.py"] for e in engines}, chain)


def test_a_plan_that_splits_cleanly_runs_in_parallel_and_says_what_it_saves(tmp_path: Path) -> None:
    index = RepoIndex(make_repo(tmp_path / "separate", _separate()))
    estimate = estimate_split(_separate_plan(), index, TASK, ratios=CLAUDE)
    assert estimate.token_ratio <= 1.25 and estimate.speedup >= 3.0
    decided = choose_mode(_separate_plan(), estimate)
    assert decided.mode == "parallel" and len(decided.tasks) == 4
    assert decided.reason.startswith("four engines, four agents (parallel: ~")
    assert f"~{estimate.token_ratio:.1f}× the tokens of one agent, ~{estimate.speedup:.1f}× faster" in decided.reason


def test_parts_that_all_read_one_large_module_run_as_one_agent(tmp_path: Path) -> None:
    index = RepoIndex(make_repo(tmp_path / "entangled", _entangled()))
    plan = _engines_plan({e: [f"{e}.py"] for e in ("alpha", "beta", "gamma", "delta")})
    estimate = estimate_split(plan, index, TASK, ratios=CLAUDE)
    assert estimate.token_ratio > 1.25  # each agent reads core.py, which one agent reads once
    decided = choose_mode(plan, estimate)
    assert decided.mode == "single" and len(decided.tasks) == 1
    assert decided.reason.startswith(f"one agent: in parallel this plan would cost ~{estimate.token_ratio:.1f}×")
    assert "The planner proposed: four engines, four agents" in decided.reason
    assert decided.tasks[0].writes == ["alpha.py", "beta.py", "delta.py", "gamma.py"]


def test_a_chain_of_tasks_saves_no_time_and_runs_as_one_agent(tmp_path: Path) -> None:
    index = RepoIndex(make_repo(tmp_path / "separate", _separate()))
    estimate = estimate_split(_separate_plan(chain=True), index, TASK, ratios=CLAUDE)
    assert estimate.speedup < 1.5
    assert choose_mode(_separate_plan(chain=True), estimate).mode == "single"


def test_without_a_prompt_cache_resending_a_growing_conversation_weighs_more(tmp_path: Path) -> None:
    index = RepoIndex(make_repo(tmp_path / "separate", _separate()))
    cached = estimate_split(_separate_plan(), index, TASK, ratios=CLAUDE)
    uncached = estimate_split(_separate_plan(), index, TASK)
    assert uncached.single_tokens > 2 * cached.single_tokens
    assert uncached.token_ratio < cached.token_ratio  # one long conversation resent in full costs the most


def _planner(plan: Plan) -> FunctionModel:
    """A model that submits `plan` at once."""

    def submit(request: ModelRequest) -> ModelResponse:
        arguments = plan.model_dump(mode="json")
        return ModelResponse(tool_calls=(ToolCall.parse("p1", "submit_plan", arguments),))

    return FunctionModel(submit, name="anthropic:claude-haiku-4-5")


def _make_plan(root: Path, model: FunctionModel | ScriptedModel, tmp_path: Path) -> Plan:
    store = SQLiteEventStore(tmp_path / "events.db")
    options = {"model": model, "log": RunLog(store, "r"), "prices": PriceTable(), "runner": LocalShell()}
    return asyncio.run(make_plan(TASK, repo_root=root, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize("repo", ["separate", "entangled"])
def test_the_planners_split_is_settled_by_the_estimate(repo: str, tmp_path: Path) -> None:
    if repo == "separate":
        root, plan, mode = make_repo(tmp_path / repo, _separate()), _separate_plan(), "parallel"
    else:
        root, mode = make_repo(tmp_path / repo, _entangled()), "single"
        plan = _engines_plan({e: [f"{e}.py"] for e in ("alpha", "beta", "gamma", "delta")})
    decided = _make_plan(root, _planner(plan), tmp_path)
    assert decided.mode == mode and "the tokens of one agent" in decided.reason


def test_a_scripted_planners_plan_runs_as_written(tmp_path: Path) -> None:
    plan = _engines_plan({e: [f"{e}.py"] for e in ("alpha", "beta", "gamma", "delta")})
    turn = {"tool_calls": [{"name": "submit_plan", "arguments": plan.model_dump(mode="json")}]}
    model = ScriptedModel(conversations=[{"match": "You are the planner", "name": "planner", "turns": [turn]}])
    decided = _make_plan(make_repo(tmp_path / "entangled", _entangled()), model, tmp_path)
    assert decided == plan


def test_split_always_runs_the_planners_plan_as_proposed(tmp_path: Path) -> None:
    """The user's override: the entangled plan the estimate turns into one agent runs split when asked."""
    root = make_repo(tmp_path / "entangled", _entangled())
    plan = _engines_plan({e: [f"{e}.py"] for e in ("alpha", "beta", "gamma", "delta")})
    store = SQLiteEventStore(tmp_path / "events.db")
    options = {"model": _planner(plan), "log": RunLog(store, "r"), "prices": PriceTable(), "runner": LocalShell()}
    decided = asyncio.run(make_plan(TASK, repo_root=root, split="always", **options))  # type: ignore[arg-type]
    assert decided == plan and decided.mode == "parallel"


def test_a_split_run_as_one_agent_names_each_parts_files_not_its_instructions(tmp_path: Path) -> None:
    """The parts' instructions were written for agents that each see one part; one agent gets where they go."""
    plan = _engines_plan({e: [f"{e}.py", f"tests/test_{e}.py"] for e in ("alpha", "beta")})
    plan.tasks[0].instructions = "Add alpha_sum to alpha.py. README.md is shared: add only your own line."
    plan.tasks[0].reads = ["core.py"]
    root = make_repo(tmp_path / "entangled", _entangled())
    decided = choose_mode(plan, estimate_split(plan, RepoIndex(root), TASK, ratios=CLAUDE))
    (whole,) = decided.tasks
    assert decided.mode == "single"
    assert "add only your own line" not in whole.instructions
    assert "- improve alpha: alpha.py, tests/test_alpha.py, core.py (read)" in whole.instructions
    assert "- improve beta: beta.py, tests/test_beta.py" in whole.instructions


def _core_package(vendored: int) -> dict[str, str]:
    """Four modules around one core, with docs; `vendored` more files make the whole map too long to list."""
    one = "def {}_{}(value: int, *, scale: float = 1.0) -> int:\n    return value\n\n"
    files = {"pkg/__init__.py": "".join(f"from pkg.{m} import {m}_0\n" for m in "abcd")}
    files["pkg/core.py"] = "".join(one.format("core", i) for i in range(16))
    for m in "abcd":
        files[f"pkg/{m}.py"] = "from pkg.core import core_0\n\n" + "".join(one.format(m, i) for i in range(14))
    files.update({f"docs/page{i}.md": "# page\n" for i in range(30)})
    files.update(
        {f"vendor/lib{i}.py": f"def helper_{i}(value: int) -> int:\n    return value\n" for i in range(vendored)}
    )
    return files


def test_a_whole_map_every_worker_shares_is_counted_once(tmp_path: Path) -> None:
    """Where workers share the whole map (cached once), a fourth task adds much less than its own area's map."""

    def added(root: Path) -> float:
        index = RepoIndex(root)
        tasks = {m: [f"pkg/{m}.py", "pkg/__init__.py"] for m in "abcd"}
        four = estimate_split(_engines_plan(tasks), index, TASK, ratios=CLAUDE)
        three = estimate_split(_engines_plan({m: tasks[m] for m in "abc"}), index, TASK, ratios=CLAUDE)
        return four.parallel_tokens - three.parallel_tokens

    shared = added(make_repo(tmp_path / "small", _core_package(0)))
    own = added(make_repo(tmp_path / "vendored", _core_package(150)))
    assert shared < own - 500
