"""A run whose agent calls the tools of an MCP server configured for it: started in the agent's sandbox, its calls
in the log, denied unless allowed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from integrators import git

from plait.agent.budget import Budget, Limits
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import Decided, PromptGiven, ToolCalled, ToolReturned
from plait.models.scripted import ScriptedModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.integrate import DirectIntegrator
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from plait.workspace.sandbox.factory import sandboxed_shell
from plait.workspace.sandbox.probe import probe

SERVER = Path(__file__).with_name("mcp_notes_server.py")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _settings(tmp_path: Path, **more: Any) -> Settings:
    log = tmp_path / "calls"
    log.mkdir(exist_ok=True)
    server = {
        "command": [sys.executable, "mcp_notes_server.py"],
        "env": {"NOTES_LOG": str(log / "calls.log"), "ESCAPE_TO": str(tmp_path / "home")},
    }
    sandbox = {
        "mcp": [
            {"verdict": "allow", "tool": "mcp__notes__add"},
            {"verdict": "allow", "tool": "mcp__notes__l*"},
            {"verdict": "allow", "tool": "mcp__notes__escape"},
        ],
        "paths": [{"verdict": "allow", "access": "write", "path": str(log)}],
        "allow_unsandboxed": True,
    }
    return Settings.model_validate({"mcp_servers": {"notes": server}, "sandbox": sandbox, "max_attempts": 1, **more})


def _run(
    repo: Repo, tmp_path: Path, turns: list[dict[str, Any]], sandboxed: bool = False
) -> tuple[ParallelOutcome, SQLiteEventStore, ScriptedModel]:
    shutil.copy(SERVER, repo.root / SERVER.name)
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "notes server")
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(repo.head(), "main")
    settings = _settings(tmp_path)
    model = ScriptedModel(turns)

    def runner(path: Path, agent: str, env: dict[str, str]) -> Any:
        if not sandboxed:
            return LocalShell()
        return sandboxed_shell(
            settings,
            worktree=path,
            common_dir=repo.root / ".git",
            log=RunLog(store, "r1"),
            agent=agent,
            interactive=False,
        )

    ctx = PlanContext(
        repo=repo,
        settings=settings,
        model=model,
        log=RunLog(store, "r1"),
        base=base,
        runners=runner,
        budget=Budget("run", Limits(), RunLog(store, "r1")),
        coordinated=False,
        retry_failed=False,
    )
    plan = Plan(mode="single", reason="one", tasks=[PlanTask(id="main", title="notes", instructions="Take notes.")])
    outcome = asyncio.run(run_plan(ctx, plan, DirectIntegrator(base.commit, "plait/r1/main")))
    return outcome, store, model


def _calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls" / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_an_agent_calls_the_servers_tools_and_the_log_has_them(repo: Repo, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [_call("mcp__notes__add", text="buy milk")]},
        {"expect": "added note 1", "tool_calls": [_call("mcp__notes__list")]},
        {"expect": "buy milk", "tool_calls": [_call("mcp__notes__secret")]},
        {"expect": "plait did not call", "tool_calls": [_call("finish", summary="noted")]},
    ]
    outcome, store, model = _run(repo, tmp_path, turns)

    assert outcome.status == "done", outcome.results
    model.assert_complete()
    prompt = next(e for e in store.events("r1", agent="main") if isinstance(e, PromptGiven))
    mcp = [t for t in prompt.tools if t.startswith("mcp__")]
    assert mcp == ["mcp__notes__add", "mcp__notes__list", "mcp__notes__secret", "mcp__notes__escape"]
    assert prompt.tools[-1] == "finish"
    offered = {t.name: t for t in model.calls[0].tools}
    assert offered["mcp__notes__add"].parameters["required"] == ["text"]
    called = [e.call.name for e in store.events("r1", agent="main") if isinstance(e, ToolCalled)]
    assert called == ["mcp__notes__add", "mcp__notes__list", "mcp__notes__secret", "finish"]
    returned = [e for e in store.events("r1", agent="main") if isinstance(e, ToolReturned)]
    assert [r.output for r in returned[:2]] == ["added note 1", "buy milk"]
    denied = returned[2]
    assert denied.is_error and "no rule allows it" in denied.output and 'tool = "mcp__notes__*"' in denied.output
    assert _calls(tmp_path) == ["add buy milk", "list"]  # the denied tool never reached the server
    topics = [e.topic for e in store.events("r1", agent="main") if isinstance(e, Decided)]
    assert "mcp" in topics and topics.count("mcp_policy") == 3


def test_the_server_runs_in_the_agents_sandbox(repo: Repo, tmp_path: Path) -> None:
    found = probe()
    if found.choose("auto") == "none":
        pytest.skip(f"no OS sandbox layer works on this machine ({found.bwrap_problem}; {found.landlock_problem})")
    (tmp_path / "home").mkdir(exist_ok=True)
    turns = [
        {"tool_calls": [_call("mcp__notes__add", text="inside")]},
        {"expect": "added note 1", "tool_calls": [_call("mcp__notes__escape")]},
        {"tool_calls": [_call("finish", summary="tried")]},
    ]
    outcome, store, model = _run(repo, tmp_path, turns, sandboxed=True)  # the policy allows escape: the OS stops it

    assert outcome.status == "done", outcome.results
    returned = [e for e in store.events("r1", agent="main") if isinstance(e, ToolReturned)]
    assert returned[0].output == "added note 1"
    assert returned[1].output.startswith("could not write"), returned[1].output
    assert _calls(tmp_path) == ["add inside"]
    assert not (tmp_path / "home" / "x").exists()


def _cli(args: list[str], env: dict[str, str], cwd: Path, out: Path) -> subprocess.Popen[bytes]:
    plait = Path(sys.executable).with_name("plait")
    with out.open("w") as sink:
        return subprocess.Popen([str(plait), *args], cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)


def test_a_resumed_run_after_kill_9_does_not_call_the_server_again_for_logged_calls(repo: Repo, tmp_path: Path) -> None:
    log = tmp_path / "calls"
    log.mkdir()
    server = json.dumps([sys.executable, "mcp_notes_server.py"])
    (repo.root / ".plait.toml").write_text(
        f"[mcp_servers.notes]\ncommand = {server}\n"
        f'env = {{ NOTES_LOG = {json.dumps(str(log / "calls.log"))}, ESCAPE_TO = "/nonexistent" }}\n'
        "[sandbox]\nallow_unsandboxed = true\n"
        '[[sandbox.mcp]]\nverdict = "allow"\ntool = "mcp__notes__*"\n'
        f'[[sandbox.paths]]\nverdict = "allow"\naccess = "write"\npath = {json.dumps(str(log))}\n'
    )
    shutil.copy(SERVER, repo.root / SERVER.name)
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "notes server")
    script = tmp_path / "script.yaml"
    started = log / "started"  # outside the worktree, which a resumed attempt makes again
    hang = f"test -e {started} || {{ touch {started}; sleep 60; }}"
    script.write_text(
        json.dumps(
            {  # a conversation's turn is counted from the request: a resumed process picks up where it was
                "conversations": [
                    {
                        "match": ".",
                        "turns": [
                            {"tool_calls": [_call("mcp__notes__add", text="one")]},
                            {"expect": "added note 1", "tool_calls": [_call("run", command=hang)]},
                            {"tool_calls": [_call("mcp__notes__list")]},
                            {"tool_calls": [_call("finish", summary="noted")]},
                        ],
                    }
                ]
            }
        )
    )
    env = {**os.environ, "PLAIT_CONCURRENCY": "1"}
    env.pop("PLAIT_MODEL", None)
    trusted = _cli(["trust", str(repo.root)], env, repo.root, tmp_path / "trust.out")
    assert trusted.wait() == 0, (tmp_path / "trust.out").read_text()
    run = ["run", "--single", "--yes", "--no-tui", "--model", f"scripted:{script}", "note"]
    first = _cli(run, env, repo.root, tmp_path / "first.out")
    try:
        while not started.exists():
            assert first.poll() is None, (tmp_path / "first.out").read_text()
            time.sleep(0.05)
    finally:
        first.kill()
        first.wait()
    assert _calls(tmp_path) == ["add one"]

    again = _cli(["resume", "last", "--json"], env, repo.root, tmp_path / "again.out")

    assert again.wait() == 0, (tmp_path / "again.out").read_text()
    assert _calls(tmp_path) == ["add one", "list"]  # the logged call is replayed; the new one starts the server
    store = SQLiteEventStore(next((repo.root / ".git").rglob("*.db")))
    run_id = store.run_ids()[-1]
    returned = [e for e in store.events(run_id, agent="main") if isinstance(e, ToolReturned)]
    assert [r.name for r in returned] == ["mcp__notes__add", "run", "mcp__notes__list", "finish"]
    assert returned[2].output == "(no notes)"  # a new server process: the first one's notes died with it
