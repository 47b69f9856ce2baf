"""The verify command is run once at the base, in the gate's sandbox, before anything is spent: one that cannot run
stops the run with one line that says why and what to do; one that fails at the base is recorded, and the run goes
on. Real git, sandbox and SQLite; the model is scripted (and, where the run stops first, never called)."""

from __future__ import annotations

import asyncio
import functools
import sys
from pathlib import Path
from typing import Any

import pytest
from integrators import git

from plait.cli._starting import sandboxed_runners
from plait.errors import ConfigError
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import GateChecked, ModelCallStarted, RunFinished, VerifyChecked
from plait.models import ScriptedModel
from plait.reconcile.gate import Gate
from plait.run.base import RunBase
from plait.run.one_agent import RunOutcome
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.preflight import preflight
from plait.sandbox_settings import PathRule, SandboxSettings
from plait.settings import Settings
from plait.workspace import Repo
from plait.workspace.sandbox import Probe, probe

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
FINISH = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "omega.py", "content": "OMEGA = 9\n"}}]},
    {"tool_calls": [{"name": "finish", "arguments": {"summary": "omega added"}}]},
]


@functools.cache
def _found() -> Probe:
    return probe()


def _settings(verify: str, **sandbox: Any) -> Settings:
    return Settings(verify_command=verify, sandbox=SandboxSettings(allow_unsandboxed=True, **sandbox))


def _orchestration(repo: Repo, store: SQLiteEventStore, settings: Settings, model: ScriptedModel) -> Orchestration:
    return Orchestration(
        repo=repo,
        task="Add omega.",
        settings=settings,
        model=model,
        log=RunLog(store, "r1"),
        base=RunBase(repo.head(), "main"),
        runners=sandboxed_runners(settings, repo, quiet=True)(RunLog(store, "r1")),
        one_agent=True,
    )


def _stopped(repo: Repo, tmp_path: Path, settings: Settings) -> tuple[str, SQLiteEventStore]:
    """The one line a run that cannot verify stops with; its model is never called."""
    store = SQLiteEventStore(tmp_path / "events.db")
    model = ScriptedModel([])
    with pytest.raises(ConfigError) as stopped:
        asyncio.run(orchestrate(_orchestration(repo, store, settings, model)))
    assert model.calls == [] and store.events("r1", kinds=["model_request"]) == []
    finished = [e for e in store.events("r1") if isinstance(e, RunFinished)]
    assert [e.status for e in finished] == ["failed"] and "cannot run" in finished[0].reason
    line = str(stopped.value)
    assert "\n" not in line and stopped.value.exit_code == 2
    return line, store


def test_a_verify_command_that_is_not_installed_stops_the_run_before_any_model_call(repo: Repo, tmp_path: Path) -> None:
    line, _ = _stopped(repo, tmp_path, _settings("python3.99 -m pytest"))
    assert line == (
        "verify command `python3.99 -m pytest` cannot run in the sandbox: python3.99: command not found "
        "(python3.99 is not on this machine either: install it, or set verify_command)"
    )


def test_a_verify_command_under_a_hidden_directory_is_named_with_the_rule_that_shows_it(
    repo: Repo, tmp_path: Path
) -> None:
    if not {"bwrap", "landlock"} & set(_found().usable()):
        pytest.skip("no OS sandbox hides anything here")
    tools = tmp_path / "tools"  # under the host's /tmp, which the sandbox hides behind the agents' own
    (tools / "bin").mkdir(parents=True)
    script = tools / "bin" / "run-tests"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m pytest "$@"\n')
    script.chmod(0o755)
    (repo.root / "test_alpha.py").write_text(
        "from alpha import alpha\n\n\ndef test_alpha():\n    assert alpha() == 0\n"
    )
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "a test")

    line, _ = _stopped(repo, tmp_path, _settings(f"{script} -q -p no:cacheprovider"))
    assert f"cannot run in the sandbox: {script}: No such file or directory" in line
    assert f"add a read+allow path rule for {tools} (sandbox.paths)" in line

    shown = PathRule(verdict="allow", access="read", path=str(tools))
    store = SQLiteEventStore(tmp_path / "again.db")
    settings = _settings(f"{script} -q -p no:cacheprovider", paths=[shown])
    outcome = asyncio.run(orchestrate(_orchestration(repo, store, settings, ScriptedModel(FINISH))))
    assert isinstance(outcome, RunOutcome) and outcome.status == "done", outcome.reason
    said = [e.decision for e in store.events("r1") if isinstance(e, VerifyChecked)]
    assert len(said) == 1 and said[0].endswith("passes at the base; the gate runs it on the agents' work")


def test_a_verify_command_the_sandbox_refuses_stops_the_run(repo: Repo, tmp_path: Path) -> None:
    line, _ = _stopped(repo, tmp_path, _settings("curl -s https://example.invalid/ok"))
    assert line.startswith("verify command `curl -s https://example.invalid/ok` cannot run in the sandbox: ")
    assert "the network is off" in line and "Instead" not in line and "set verify_command" in line


def test_an_interpreter_without_the_module_the_command_runs_stops_the_run(repo: Repo, tmp_path: Path) -> None:
    line, _ = _stopped(repo, tmp_path, _settings(f"{sys.executable} -m no_such_runner_here -q"))
    assert "No module named no_such_runner_here" in line and "read+allow path rule" in line


def test_a_verify_command_that_fails_at_the_base_is_recorded_once_and_the_run_goes_on(
    repo: Repo, tmp_path: Path
) -> None:
    (repo.root / "test_alpha.py").write_text(
        "from alpha import alpha\n\n\ndef test_alpha():\n    assert alpha() == 1\n"
    )
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "a failing test")
    base = repo.head()
    store = SQLiteEventStore(tmp_path / "events.db")
    model = ScriptedModel(FINISH)
    outcome = asyncio.run(orchestrate(_orchestration(repo, store, _settings(PYTEST), model)))

    assert isinstance(outcome, RunOutcome) and outcome.status == "done", outcome.reason
    said = [e for e in store.events("r1") if isinstance(e, VerifyChecked)]
    assert [e.state for e in said] == ["fails"]
    assert said[0].decision.startswith(f"verify command `{PYTEST}` already fails at the base (exit 1: 1 failed")
    assert said[0].decision.endswith("the gate does not hold the base's failures against the agents' work")
    at_base = [e for e in store.events("r1") if isinstance(e, GateChecked) and e.commit == base and e.stage == "verify"]
    assert len(at_base) == 1 and not at_base[0].passed  # the gate compared the agent's work with this run
    assert said[0].seq < store.events("r1", kinds=["model_request"])[0].seq  # before any model call
    assert [e.agent for e in store.events("r1") if isinstance(e, ModelCallStarted)] == ["main", "main"]

    # a resumed run does not check again: the answer is read back from the log, for that base and command
    gate = Gate(repo, base=base, log=RunLog(store, "r1"), verify_command=PYTEST)
    again = asyncio.run(preflight(gate, RunLog(store, "r1")))
    assert again.cached and again.state == "fails" and gate.base_fails is True and gate.runs == 0
    other = Gate(repo, base=base, log=RunLog(store, "r1"), verify_command=PYTEST + " -x")
    try:
        assert not asyncio.run(preflight(other, RunLog(store, "r1"))).cached
    finally:
        other.close()
