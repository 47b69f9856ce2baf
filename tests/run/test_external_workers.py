"""External agents as workers of a parallel run: a command template edits each task's worktree, plait does the rest
(worktrees, branches, the log, integration). Real git and real processes; no model at all."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from integrators import MergeTreeIntegrator, git

from anthropic_stream import StreamServer
from plait.agent.budget import Budget, Limits
from plait.events import SQLiteEventStore, TaskFinished, ToolCalled, ToolReturned
from plait.events.runlog import RunLog
from plait.events.types import AgentStopped
from plait.models import ScriptedModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from responses_stream import ResponsesServer

AGENT = """
import pathlib, re, sys
prompt = pathlib.Path(sys.argv[1]).read_text()
name = re.search(r"Your task is `(\\w+)`", prompt).group(1)
print(f"working on {name}")
if name == "beta":
    print("beta cannot be done", file=sys.stderr)
    sys.exit(3)
path = pathlib.Path(sys.argv[2]) / f"{name}.py"
path.write_text(path.read_text().replace("return 0", "return 7"))
print(f"{name} now returns 7")
"""


def _plan(*ids: str, agent: dict[str, str] | None = None) -> Plan:
    tasks = [
        PlanTask(
            id=i,
            title=f"change {i}",
            instructions=f"Make {i} return 7.",
            writes=[f"{i}.py"],
            agent=(agent or {}).get(i, ""),
        )
        for i in ids
    ]
    return Plan(mode="parallel", reason="independent modules", tasks=tasks)


def _run(repo: Repo, tmp_path: Path, plan: Plan, **settings: Any) -> tuple[ParallelOutcome, SQLiteEventStore, str]:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(repo.head(), "main")
    integrator = MergeTreeIntegrator(repo, "r1", base.commit)
    template = f"command:{sys.executable} {script} {{prompt_file}} {{worktree}}"
    ctx = PlanContext(
        repo=repo,
        settings=Settings(**{"agent": template, "max_attempts": 1, **settings}),
        model=ScriptedModel(conversations=[]),
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
        budget=Budget("run", Limits(), RunLog(store, "r1")),
    )
    return asyncio.run(run_plan(ctx, plan, integrator)), store, integrator.branch


def test_a_command_agent_edits_each_worktree_and_its_work_is_integrated(repo: Repo, tmp_path: Path) -> None:
    outcome, store, branch = _run(repo, tmp_path, _plan("alpha", "gamma"), concurrency=2)

    assert outcome.status == "done", outcome.results
    for name in ("alpha", "gamma"):
        assert "return 7" in git(repo.root, "show", f"{branch}:{name}.py")
        files = git(repo.root, "show", "--name-only", "--format=", f"plait/r1/{name}").split()
        assert files == [f"{name}.py"]  # the agent's own files (its prompt) are not committed
        calls = [e for e in store.events("r1", agent=name) if isinstance(e, ToolCalled)]
        results = [e for e in store.events("r1", agent=name) if isinstance(e, ToolReturned)]
        assert [c.call.name for c in calls] == ["command"]
        assert f"working on {name}\n{name} now returns 7" in results[0].output and not results[0].is_error
        stopped = next(e for e in store.events("r1", agent=name) if isinstance(e, AgentStopped))
        assert stopped.reason == "finished" and stopped.summary == f"{name} now returns 7"


def test_a_command_that_fails_fails_its_task_with_what_it_said(repo: Repo, tmp_path: Path) -> None:
    outcome, store, branch = _run(repo, tmp_path, _plan("alpha", "beta"))

    assert outcome.results["alpha"].status == "done" and outcome.results["beta"].status == "dropped"
    failed = next(e for e in store.events("r1", agent="beta") if isinstance(e, TaskFinished) and e.status == "failed")
    assert "exited with 3" in failed.reason and "beta cannot be done" in failed.reason
    assert "return 0" in git(repo.root, "show", f"{branch}:beta.py")


def test_a_task_of_the_plan_names_its_own_agent(repo: Repo, tmp_path: Path) -> None:
    script = tmp_path / "other.py"
    script.write_text("import pathlib, sys\npathlib.Path(sys.argv[1], 'gamma.py').write_text('gamma = 9\\n')\n")
    own = f"command:{sys.executable} {script} {{worktree}}"
    outcome, _, branch = _run(repo, tmp_path, _plan("alpha", "gamma", agent={"gamma": own}))

    assert outcome.status == "done", outcome.results
    assert git(repo.root, "show", f"{branch}:gamma.py") == "gamma = 9"
    assert "return 7" in git(repo.root, "show", f"{branch}:alpha.py")


def _claude_model(body: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's model: write the task's file, then say it is done; side requests (a title) get text."""
    if not body.get("tools"):
        return {"text": "plait task"}
    system = json.dumps(body.get("system", ""))
    said = json.dumps(body["messages"])
    name = re.search(r"Your task is `(\w+)`", said)
    where = re.search(r"working directory: ([^\s\\]+)", system)
    assert name and where, "the brief and the worktree reach Claude Code"
    if "tool_result" not in said:
        content = f"def {name.group(1)}_impl():\n    return 7\n"
        path = f"{where.group(1)}/{name.group(1)}_impl.py"
        return {
            "tool_calls": [{"name": "Write", "arguments": {"file_path": path, "content": content}}],
            "usage": {"input_tokens": 900, "output_tokens": 40},
        }
    return {"text": f"{name.group(1)} is done", "usage": {"input_tokens": 1000, "output_tokens": 10}}


@pytest.mark.skipif(
    shutil.which("claude") is None,
    reason="Claude Code is not installed (npm install -g @anthropic-ai/claude-code; .ci/run installs it)",
)
def test_real_claude_code_workers_write_their_tasks_and_are_integrated(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = Plan(
        mode="parallel",
        reason="two new modules",
        tasks=[
            PlanTask(id=i, title=f"add {i}", instructions=f"Add {i}_impl.py.", writes=[f"{i}_impl.py"])
            for i in ("alpha", "beta")
        ],
    )
    with StreamServer(_claude_model) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        outcome, store, branch = _run(repo, tmp_path, plan, agent="claude-code", concurrency=2)
        asked = server.requests

    assert outcome.status == "done", outcome.results
    for name in ("alpha", "beta"):
        assert git(repo.root, "show", f"{branch}:{name}_impl.py") == f"def {name}_impl():\n    return 7"
        calls = [e.call.name for e in store.events("r1", agent=name) if isinstance(e, ToolCalled)]
        assert calls == ["Write"]
        stopped = next(e for e in store.events("r1", agent=name) if isinstance(e, AgentStopped))
        assert stopped.reason == "finished" and stopped.summary == f"{name} is done"
        assert stopped.usage.output_tokens >= 50
    assert any("Your task is `alpha`" in json.dumps(body) for body in asked)
    assert os.environ["ANTHROPIC_API_KEY"] not in json.dumps([e.model_dump(mode="json") for e in store.events("r1")])


@pytest.mark.skipif(
    shutil.which("claude") is None,
    reason="Claude Code is not installed (npm install -g @anthropic-ai/claude-code; .ci/run installs it)",
)
def test_plait_run_with_claude_code_workers_ends_verified_and_shows_their_calls_and_cost(
    repo: Repo, tmp_path: Path
) -> None:
    plan, script = tmp_path / "plan.yaml", tmp_path / "planner.yaml"
    tasks = [
        {"id": i, "title": f"add {i}", "instructions": f"Add {i}_impl.py.", "writes": [f"{i}_impl.py"]}
        for i in ("alpha", "beta")
    ]
    plan.write_text(json.dumps({"mode": "parallel", "reason": "two new modules", "tasks": tasks}))
    script.write_text(json.dumps({"conversations": []}))
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "HOME": str(tmp_path / "home"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PLAIT_VERIFY_COMMAND": "python -m py_compile alpha.py",
    }

    def plait(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "plait", *args, "-C", str(repo.root)]
        return subprocess.run(argv, env=run_env, capture_output=True, text=True, timeout=300, check=False)

    with StreamServer(_claude_model) as server:
        run_env = {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key"}
        flags = ["--plan", str(plan), "--model", f"scripted:{script}", "--agent", "claude-code", "--yes", "--no-tui"]
        done = plait("run", "add two modules", *flags, "--json")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "done" and "network" in done.stderr
    branch = result["branch"]
    for name in ("alpha", "beta"):
        assert git(repo.root, "show", f"{branch}:{name}_impl.py") == f"def {name}_impl():\n    return 7"
    shown = plait("show", "last", "alpha", "--no-pager")
    assert shown.returncode == 0 and "Write" in shown.stdout and "alpha_impl.py" in shown.stdout, shown.stdout
    cost = plait("cost", "last", "--json")
    assert cost.returncode == 0, cost.stderr
    spent = json.loads(cost.stdout)
    assert spent["total"]["cost_usd"] > 0 and spent["total"]["usage"]["output_tokens"] == 100
    assert {a["name"] for a in spent["by_agent"]} == {"alpha", "beta"}


def _codex_model(body: dict[str, Any]) -> dict[str, Any]:
    """Codex's model: write the task's file with its shell tool, then say it is done."""
    said = json.dumps(body.get("input", []))
    name = re.search(r"Your task is `(\w+)`", said)
    assert name, "the brief reaches Codex"
    if "function_call_output" not in said:
        command = f"printf 'def {name.group(1)}_impl():\\n    return 7\\n' > {name.group(1)}_impl.py"
        return {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": command}}], "output_tokens": 30}
    return {"text": f"{name.group(1)} is done", "output_tokens": 5}


@pytest.mark.skipif(
    shutil.which("claude") is None or shutil.which("codex") is None,
    reason="Claude Code or Codex is not installed (npm install -g @anthropic-ai/claude-code @openai/codex; "
    ".ci/run installs them)",
)
def test_a_claude_code_task_and_a_codex_task_are_integrated_together(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = Plan(
        mode="parallel",
        reason="two new modules",
        tasks=[
            PlanTask(id="alpha", title="add alpha", instructions="Add alpha_impl.py.", writes=["alpha_impl.py"]),
            PlanTask(
                id="beta", title="add beta", instructions="Add beta_impl.py.", writes=["beta_impl.py"], agent="codex"
            ),
        ],
    )
    with StreamServer(_claude_model) as claude, ResponsesServer(_codex_model) as codex:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        model = f"openai-compatible:gpt-5.1-codex@{codex.url}"
        outcome, store, branch = _run(repo, tmp_path, plan, agent="claude-code", concurrency=2, model=model)

    assert outcome.status == "done", outcome.results
    for name in ("alpha", "beta"):
        assert git(repo.root, "show", f"{branch}:{name}_impl.py") == f"def {name}_impl():\n    return 7"
    calls = [e.call.name for e in store.events("r1", agent="beta") if isinstance(e, ToolCalled)]
    assert calls == ["command_execution"]
    stopped = next(e for e in store.events("r1", agent="beta") if isinstance(e, AgentStopped))
    assert stopped.reason == "finished" and stopped.summary == "beta is done" and stopped.usage.output_tokens == 35
    files = git(repo.root, "show", "--name-only", "--format=", "plait/r1/beta").split()
    assert files == ["beta_impl.py"]  # not Codex's home or prompt
