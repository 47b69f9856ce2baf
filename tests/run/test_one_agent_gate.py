"""`plait run --single` through the gate: the agent's result against the base, with the run's verify command run in
the sandbox. Real git, worktrees, sandbox and SQLite; only the model is scripted."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from integrators import git

from plait.cli._starting import sandboxed_runners
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import GateChecked, Integrated, PromptGiven
from plait.models import ScriptedModel
from plait.run.base import RunBase
from plait.run.one_agent import RunOutcome
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.state import load_state
from plait.sandbox_settings import SandboxSettings
from plait.settings import Settings
from plait.workspace import Repo

VERIFY = f"{sys.executable} -m pytest -q -p no:cacheprovider"
TEST = "from alpha import alpha\n\n\ndef test_alpha():\n    assert alpha() == 0\n"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


BREAK = [_call("edit_file", path="alpha.py", old="return 0", new="return 1"), _call("finish", summary="alpha is 1")]
FIX = [  # the same whether or not the retry starts from the first attempt's work
    _call("write_file", path="alpha.py", content="def alpha():\n    return 1\n"),
    _call("write_file", path="test_alpha.py", content=TEST.replace("== 0", "== 1")),
    _call("finish", summary="alpha is 1, and its test says so"),
]


@pytest.fixture
def tested(repo: Repo) -> Repo:
    (repo.root / "test_alpha.py").write_text(TEST)
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "a test")
    return repo


def _run(repo: Repo, tmp_path: Path, model: ScriptedModel, **settings: Any) -> tuple[RunOutcome, SQLiteEventStore]:
    store = SQLiteEventStore(tmp_path / "events.db")
    config = Settings(verify_command=VERIFY, sandbox=SandboxSettings(allow_unsandboxed=True), **settings)
    work = Orchestration(
        repo=repo,
        task="Make alpha return 1.",
        settings=config,
        model=model,
        log=RunLog(store, "r1"),
        base=RunBase(repo.head(), "main"),
        runners=sandboxed_runners(config, repo, quiet=True)(RunLog(store, "r1")),
        one_agent=True,
        state=load_state(RunLog(store, "r1")) if store.events("r1") else None,
    )
    outcome = asyncio.run(orchestrate(work))
    assert isinstance(outcome, RunOutcome)
    return outcome, store


def _verdicts(store: SQLiteEventStore) -> list[tuple[str, bool]]:
    return [(e.stage, e.passed) for e in store.events("r1") if isinstance(e, GateChecked) and e.tasks == ["main"]]


def test_a_change_that_passes_the_gate_is_the_result_and_the_brief_named_the_command(
    tested: Repo, tmp_path: Path
) -> None:
    add = _call("write_file", path="omega.py", content="def omega():\n    return 9\n")
    model = ScriptedModel([add, _call("finish", summary="omega added")])
    outcome, store = _run(tested, tmp_path, model)

    model.assert_complete()
    assert outcome.status == "done" and outcome.branch == "plait/r1/main"
    assert git(tested.root, "rev-parse", "plait/r1/main") == outcome.commit
    assert _verdicts(store) == [("parse", True), ("semantic", True), ("verify", True)]
    passed = [e for e in store.events("r1") if isinstance(e, GateChecked) and e.tasks][-1]
    assert "1 passed" in passed.output
    assert [e.tasks for e in store.events("r1") if isinstance(e, Integrated)] == [["main"]]
    brief = next(e for e in store.events("r1") if isinstance(e, PromptGiven))
    assert VERIFY in brief.user and "Make alpha return 1." in brief.user


def test_a_change_that_breaks_the_tests_is_sent_back_with_the_failure_and_redone(tested: Repo, tmp_path: Path) -> None:
    model = ScriptedModel(
        conversations=[
            {"name": "retry", "match": r"previous attempt at this task failed.*FAILED test_alpha\.py", "turns": FIX},
            {"name": "first", "match": "Make alpha return 1", "turns": BREAK},
        ]
    )
    outcome, store = _run(tested, tmp_path, model, max_attempts=2)

    model.assert_complete()
    assert outcome.status == "done", outcome.reason
    assert _verdicts(store) == [
        ("parse", True),
        ("semantic", True),
        ("verify", False),
        ("parse", True),
        ("semantic", True),
        ("verify", True),
    ]
    assert "assert alpha() == 1" in git(tested.root, "show", "plait/r1/main:test_alpha.py")
    rejected = git(tested.root, "show", "plait/r1/main.1:test_alpha.py")  # the first attempt's work is kept
    assert "assert alpha() == 0" in rejected and "return 1" in git(tested.root, "show", "plait/r1/main.1:alpha.py")
    retry = [e for e in store.events("r1") if isinstance(e, PromptGiven)][-1]
    assert retry.attempt == 2 and VERIFY in retry.user and "assert 1 == 0" in retry.user


def test_a_change_the_gate_keeps_failing_ends_the_run_failed_with_its_reason(tested: Repo, tmp_path: Path) -> None:
    model = ScriptedModel(BREAK)
    base = tested.head()
    outcome, store = _run(tested, tmp_path, model, max_attempts=1)

    model.assert_complete()
    assert outcome.status == "failed"
    assert outcome.reason.startswith("the verify check failed: "), outcome.reason
    assert "FAILED test_alpha.py::test_alpha - assert 1 == 0" in outcome.reason
    assert git(tested.root, "rev-parse", "plait/r1/main") == base  # the result branch never took the failing work
    assert outcome.branch == "plait/r1/main.1" and git(tested.root, "rev-parse", "plait/r1/main.1") == outcome.commit
    assert [(e.ejected, e.commit) for e in store.events("r1") if isinstance(e, Integrated)] == [(["main"], base)]


def test_a_resumed_run_reads_the_gates_logged_verdict_back(tested: Repo, tmp_path: Path) -> None:
    add = _call("write_file", path="omega.py", content="def omega():\n    return 9\n")
    _, store = _run(tested, tmp_path, ScriptedModel([add, _call("finish", summary="omega added")]))
    checks = len(store.events("r1", kinds=["gate"]))
    # the process died once the gate's verdict was logged, before the branch moved
    first = next(e.seq for e in store.events("r1") if isinstance(e, Integrated))
    store.close()
    with sqlite3.connect(tmp_path / "events.db") as db:
        db.execute("DELETE FROM events WHERE seq >= ?", (first,))

    outcome, store = _run(tested, tmp_path, ScriptedModel([]))  # no model call either
    assert outcome.status == "done" and git(tested.root, "rev-parse", "plait/r1/main") == outcome.commit
    assert len(store.events("r1", kinds=["gate"])) == checks
    assert [e.tasks for e in store.events("r1") if isinstance(e, Integrated)] == [["main"]]
