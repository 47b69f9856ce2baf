"""The parallel demo's task, script and bundled project must agree.

The whole demo runs in this process as `plait demo` runs it: the planner plays the script's planner
conversation on a copy of the bundled project, then every task's agent plays its conversation with the
real tools, each in its own git worktree, all at once on one strict scripted model (so every `expect` and
every `old` of an edit is checked against what the tools really return), under leases, with the merge
queue and its gate (the project's tests) but no model to resolve conflicts. Its story must hold:
csv-export claims percent-split's tally/money.py, waits for it, gets its integrated work and edits on
top of it (no conflict there); storage-errors and remove-expense both add a line to the shared
CHANGELOG.md, which the merge ladder reconciles.
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
from plait.agent.prompts import shared_prefix, task_brief, task_prompt
from plait.demo import prepare_demo
from plait.events import Committed, LeaseChanged, MergeStep
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.models.scripted import ScriptedModel
from plait.plan import resolve_overlaps, tracked_files
from plait.plan_model import Plan, parse_plan
from plait.run._brief import plan_overview
from plait.run.base import RunBase
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.parallel import ParallelOutcome
from plait.settings import Settings
from plait.workspace import LocalShell

DEMO = Path(plait.__file__).parent / "demo"
REPO = DEMO / "repo"
SCRIPT = DEMO / "parallel.yaml"
TASK = DEMO / "parallel_task.txt"
PLANNER = "planner"
TRIAGE = "triage"
CLAIMED = "tally/money.py"
"""In percent-split's write-set; csv-export claims it, waits, and adds a function on top of percent-split's."""
OUTSIDER = "csv-export"
CHANGELOG = "CHANGELOG.md"
"""Shared by every task: storage-errors and remove-expense each add a line to it at the same time."""
NOTERS = ("storage-errors", "remove-expense")

_PLANNER_TOOLS = {"read_file", "list_files", "search", "submit_plan"}
_LAST = {TRIAGE: ({"choose_mode"}, "choose_mode"), PLANNER: (_PLANNER_TOOLS, "submit_plan")}
_WORKER_TOOLS = {"read_file", "list_files", "search", "edit_file", "write_file", "run", "claim", "post_note", "finish"}
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


def test_each_conversation_is_the_triage_the_planner_or_a_task() -> None:
    model = ScriptedModel.from_file(SCRIPT)
    assert [c.name for c in model.conversations] == [TRIAGE, PLANNER, *(t.id for t in _plan().tasks)]
    assert TASK.read_text().strip()
    for conversation in model.conversations:
        tools, last = _LAST.get(conversation.name, (_WORKER_TOOLS, "finish"))
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


def _run_demo(where: Path, store: SQLiteEventStore) -> tuple[ParallelOutcome, ScriptedModel, str]:
    """The parallel demo, prepared as `plait demo --fast` prepares it, run to its end in this process."""
    repo, task, model = prepare_demo(where, fast=True, parallel=True)
    base = RunBase(repo.head(), "main")
    work = Orchestration(
        repo=repo,
        task=task,
        settings=Settings(),
        model=model,
        log=RunLog(store, "demo"),
        base=base,
        runners=lambda path, agent, env: LocalShell(env={**_env(), **env}),
        use_llm_resolver=False,
    )
    outcome = asyncio.run(orchestrate(work))
    assert isinstance(outcome, ParallelOutcome)
    return outcome, model, base.commit


def test_the_demo_serialises_one_file_and_reconciles_another(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    outcome, model, base = _run_demo(tmp_path / "tally", store)
    root = tmp_path / "tally"
    # A drifted `expect` (a failing test run included) stops its agent with the script's error as the reason.
    assert outcome.status == "done", outcome.results
    assert {t: r.status for t, r in outcome.results.items()} == {t.id: "done" for t in _plan().tasks}
    model.assert_complete()

    # Each task wrote its own files, and outside them only the claimed file and the shared changelog.
    plan = _plan()
    own = {c.agent: set(c.files) for c in store.events("demo", kinds=["commit"]) if isinstance(c, Committed)}
    outside = {(t.id, p) for t in plan.tasks for p in own[t.id] if p not in t.writes}
    assert outside == {(OUTSIDER, CLAIMED), *((t, CHANGELOG) for t in NOTERS)}

    # csv-export waited for percent-split, took its integrated work, and built on it.
    found = store.events("demo", agent=OUTSIDER, kinds=["lease"])
    leases = [e.model_dump() for e in found if isinstance(e, LeaseChanged) and e.path == CLAIMED]
    assert [(d["action"], d["holder"]) for d in leases[:3]] == [
        ("wait", "percent-split"),
        ("claim", OUTSIDER),
        ("update", OUTSIDER),
    ]
    assert leases[1]["after"] == ["percent-split"] and leases[2]["conflicts"] == []
    final = _git(root, "rev-parse", f"plait/demo/{OUTSIDER}").strip()
    _git(root, "merge-base", "--is-ancestor", leases[2]["head"], final)  # the merged head is in its history

    # At integration nothing conflicted on the claimed file; the changelog's two lines were reconciled.
    steps = [e for e in store.events("demo", kinds=["merge"]) if isinstance(e, MergeStep)]
    assert not [s for s in steps if CLAIMED in s.files]
    assert [(s.rung, s.outcome, s.files) for s in steps if s.outcome in ("conflict", "resolved")] == [
        ("git", "conflict", [CHANGELOG]),
        ("deterministic", "resolved", [CHANGELOG]),
    ]

    merged = tmp_path / "integrated"
    _git(root, "worktree", "add", "-q", "--detach", str(merged), outcome.commit)
    money, changelog = (merged / CLAIMED).read_text(), (merged / CHANGELOG).read_text()
    assert "def format_plain(" in money and "def parse_percent(" in money
    assert money.index("def format_plain(") < money.index("def parse_percent(")  # placed among the older helpers
    assert "expense 2 has no" in changelog and "remove_expense" in changelog
    assert _git(root, "diff", "--stat", base, outcome.commit, "--", "tally/split.py").strip()
    done = _pytest(merged)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout
