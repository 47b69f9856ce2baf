"""The parallel demo's task, script and bundled project must agree.

Without the orchestrator, but with plait's own parts: the planner agent plays the script's planner
conversation on a copy of the bundled project; then every task's agent plays its conversation with the
real tools, each in its own git worktree, all at once on one scripted model (so every `expect` and every
`old` of an edit is checked against what the tools really return). The branches are then merged in plan
order by the model-free merge ladder and the project's tests run on the result: git's line merge must
conflict on exactly one file, and the structured (entity-level) merge must resolve it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
import yaml

import plait
from plait.agent.loop import Agent, AgentResult
from plait.agent.prompts import shared_prefix, task_brief, task_prompt
from plait.agent.tools import Toolbox
from plait.events.store import SQLiteEventStore
from plait.models.base import UserMessage
from plait.models.pricing import PriceTable
from plait.models.scripted import ScriptedModel
from plait.plan import Plan, make_plan, parse_plan, repo_map, resolve_overlaps, tracked_files
from plait.reconcile.ladder import merge_commits_sync
from plait.run.parallel import plan_overview
from plait.workspace import LocalRunner, Repo

DEMO = Path(plait.__file__).parent / "demo"
REPO = DEMO / "repo"
SCRIPT = DEMO / "parallel.yaml"
TASK = DEMO / "parallel_task.txt"
PLANNER = "planner"
SHARED = "tally/money.py"
"""The one file two tasks change: both append a function at its end."""
OUTSIDER = "csv-export"
"""The task that writes SHARED without having it in its write-set."""

_PLANNER_TOOLS = {"read_file", "list_files", "search", "submit_plan"}
_WORKER_TOOLS = {"read_file", "list_files", "search", "edit_file", "write_file", "run", "finish"}
_SKIPPED = ("__pycache__", ".pytest_cache", "*.pyc")
_IDENTITY = {
    "GIT_AUTHOR_NAME": "demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
}


def _env() -> dict[str, str]:
    """This environment, with the interpreter running the tests first on PATH, so `python` has pytest."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return {**env, **_IDENTITY}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=_env(), check=True, capture_output=True, text=True)
    return done.stdout


def _pytest(root: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return subprocess.run(command, cwd=root, env=_env(), capture_output=True, text=True, timeout=120)


def _scripted_plan() -> dict[str, Any]:
    """The plan the planner conversation submits, as written in the script."""
    data = yaml.safe_load(SCRIPT.read_text())
    planner = next(c for c in data["conversations"] if c["name"] == PLANNER)
    call = planner["turns"][-1]["tool_calls"][-1]
    assert call["name"] == "submit_plan"
    plan: dict[str, Any] = call["arguments"]["plan"]
    return plan


def _plan() -> Plan:
    plan, problems = parse_plan(_scripted_plan())
    assert plan is not None, problems
    return plan


def _model() -> ScriptedModel:
    """The script without its delays: these tests check what happens, not when."""
    model = ScriptedModel.from_file(SCRIPT)
    model.conversations = [
        c.model_copy(update={"turns": [t.model_copy(update={"delay": 0.0}) for t in c.turns]})
        for c in model.conversations
    ]
    return model


def _routes(model: ScriptedModel, system: str, first: str) -> list[str]:
    """The conversations whose pattern matches a request, searched as ScriptedModel does."""
    head = system + "\n" + first
    return [c.name for c in model.conversations if re.search(c.match, head, re.DOTALL)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A committed copy of the bundled project, on branch main."""
    root = tmp_path / "tally"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(*_SKIPPED))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "tally: initial version")
    return root


def test_each_conversation_is_a_planner_or_a_task() -> None:
    model = ScriptedModel.from_file(SCRIPT)
    assert [c.name for c in model.conversations] == [PLANNER, *(t.id for t in _plan().tasks)]
    assert TASK.read_text().strip()
    for conversation in model.conversations:
        tools, last = (_PLANNER_TOOLS, "submit_plan") if conversation.name == PLANNER else (_WORKER_TOOLS, "finish")
        assert conversation.turns[0].expect is None, f"{conversation.name}: turn 1 has no tool result to expect"
        for number, turn in enumerate(conversation.turns, start=1):
            where = f"{conversation.name} turn {number}"
            assert turn.text, f"{where} has no text"
            assert 0.2 <= turn.delay <= 0.6, f"{where}: a delay of {turn.delay}s is too short to see or too slow"
            assert turn.tool_calls, f"{where} calls no tool"
            for call in turn.tool_calls:
                assert call.name in tools, f"{where} calls {call.name}, which this agent does not have"
        assert [c.name for c in conversation.turns[-1].tool_calls] == [last]


def test_the_plan_runs_every_task_at_once(project: Path) -> None:
    plan = _plan()
    assert plan.mode == "parallel"
    assert 3 <= len(plan.tasks) <= 4
    assert not any(task.depends_on for task in plan.tasks)
    assert all(len(set(a.writes) & set(b.writes)) == 0 for a, b in combinations(plan.tasks, 2))
    resolved, decisions = resolve_overlaps(plan, tracked_files(project))
    assert decisions == [], "overlap analysis would order or merge tasks, and the demo would not be parallel"
    assert resolved == plan
    for task in plan.tasks:
        new_tests = [p for p in task.writes if p.startswith("tests/test_") and not (project / p).exists()]
        assert len(new_tests) == 1, f"{task.id} should write one new test file"


def test_each_first_message_picks_its_own_conversation() -> None:
    model = ScriptedModel.from_file(SCRIPT)
    plan = _plan()
    task = TASK.read_text()
    system = shared_prefix("tally/money.py\ntally/split.py", plan_overview(plan))
    for message in (task_prompt(task), task_prompt("Make a plan for this task:\n\n" + task)):
        assert _routes(model, "", message) == [PLANNER]
    for t in plan.tasks:
        brief = task_brief(t.id, t.title, t.instructions, t.writes)
        # the agent's first message is its brief wrapped by task_prompt
        assert _routes(model, system, task_prompt(brief)) == [t.id]
    assert _routes(model, system, "") == []


def _merge_file(tmp_path: Path, base: str, ours: str, theirs: str) -> int:
    """The number of conflicts `git merge-file` finds merging `theirs` into `ours`."""
    paths = []
    for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
        path = tmp_path / f"merge-file.{name}"
        path.write_text(text)
        paths.append(str(path))
    done = subprocess.run(["git", "merge-file", "-p", *paths], capture_output=True, text=True)
    assert done.returncode < 128 and not done.stderr, done.stderr  # git exits with -1 (255) on an error
    return done.returncode


def _integrate(repo: Repo, base: str, branches: list[str]) -> tuple[str, dict[str, list[tuple[str, str]]]]:
    """Merge `branches` one by one onto `base` with the model-free ladder: the head, and the rungs each needed."""
    head = base
    rungs: dict[str, list[tuple[str, str]]] = {}
    for branch in branches:
        outcome = merge_commits_sync(repo, head, branch, message=f"merge {branch}")
        assert outcome.commit, f"{branch}: {outcome.detail}"
        rungs[branch] = [(r.path, r.rung) for r in outcome.resolutions]
        head = outcome.commit
    return head, rungs


async def _run_tasks(
    model: ScriptedModel, plan: Plan, system: str, trees: dict[str, Path], store: SQLiteEventStore
) -> dict[str, AgentResult]:
    """Every task's agent at once, each in its worktree, as the parallel run starts them."""

    async def one(task_id: str) -> AgentResult:
        task = plan.task(task_id)
        agent = Agent(
            run_id="demo",
            agent_id=task.id,
            model=model,
            toolbox=Toolbox(trees[task.id], LocalRunner(env=_env()), command_timeout=120),
            store=store,
            prices=PriceTable(),
            system=system,
        )
        return await agent.run(task_brief(task.id, task.title, task.instructions, task.writes))

    async with asyncio.TaskGroup() as group:
        running = {t.id: group.create_task(one(t.id)) for t in plan.tasks}
    return {task_id: job.result() for task_id, job in running.items()}


def test_the_script_plays_and_its_branches_merge(project: Path, tmp_path: Path) -> None:
    model = _model()
    store = SQLiteEventStore(tmp_path / "events.db")
    plan = asyncio.run(
        make_plan(
            TASK.read_text(),
            repo_root=project,
            model=model,
            store=store,
            run_id="demo",
            prices=PriceTable(),
            runner=LocalRunner(env=_env()),
        )
    )
    assert plan == _plan()

    trees = {t.id: tmp_path / "worktrees" / t.id for t in plan.tasks}
    for task in plan.tasks:
        _git(project, "worktree", "add", "-q", "-b", f"task/{task.id}", str(trees[task.id]), "main")
    system = shared_prefix(repo_map(project), plan_overview(plan))
    results = asyncio.run(_run_tasks(model, plan, system, trees, store))
    for task_id, result in results.items():
        # A drifted `expect` (a failing test run included) stops the agent with the script's error as summary.
        assert result.reason == "finished", f"{task_id}: {result.summary}"
    model.assert_complete()

    firsts = {(r.system, next(m.text for m in r.messages if isinstance(m, UserMessage))) for r in model.calls}
    routed = sorted(name for system_text, first in firsts for name in _routes(model, system_text, first))
    assert routed == sorted([PLANNER, *results]), "each agent's first message must pick exactly its conversation"

    for task in plan.tasks:
        _git(trees[task.id], "add", "-A")
        _git(trees[task.id], "-c", "commit.gpgsign=false", "commit", "-q", "-m", task.title)
    changed = {t.id: set(_git(project, "diff", "--name-only", "main", f"task/{t.id}").split()) for t in plan.tasks}
    outside = {(t.id, path) for t in plan.tasks for path in changed[t.id] if path not in t.writes}
    assert outside == {(OUTSIDER, SHARED)}
    shared = {(a, b): changed[a] & changed[b] for a, b in combinations(changed, 2) if changed[a] & changed[b]}
    assert list(shared.values()) == [{SHARED}], shared
    [(first, second)] = shared

    # git's line merge conflicts on the shared file, whichever branch comes first ...
    base = (REPO / SHARED).read_text()
    sides = [_git(project, "show", f"task/{task_id}:{SHARED}") for task_id in (first, second)]
    assert _merge_file(tmp_path, base, sides[0], sides[1]) > 0
    assert _merge_file(tmp_path, base, sides[1], sides[0]) > 0

    # ... and the merge ladder without a model takes every branch in, in either order: the branch that comes
    # second of the two needs the structured merge, and the project's tests pass on the result.
    repo, base_commit = Repo.discover(project), _git(project, "rev-parse", "main").strip()
    order = [f"task/{t.id}" for t in plan.tasks]
    for branches in (order, order[::-1]):
        head, rungs = _integrate(repo, base_commit, branches)
        later = next(b for b in reversed(branches) if b in (f"task/{first}", f"task/{second}"))
        assert rungs == {b: [(SHARED, "structured")] if b == later else [] for b in branches}
        merged = tmp_path / f"integrated-{branches[0].removeprefix('task/')}-first"
        _git(project, "worktree", "add", "-q", "--detach", str(merged), head)
        assert all((merged / path).is_file() for paths in changed.values() for path in paths)
        money = (merged / SHARED).read_text()
        assert "def format_plain(" in money and "def parse_percent(" in money
        done = _pytest(merged)
        assert done.returncode == 0, done.stdout + done.stderr
        assert " passed" in done.stdout and "failed" not in done.stdout
