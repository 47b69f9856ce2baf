"""`plait mcp` over stdio, driven by the MCP SDK's own client: a real server process, a real repository, and runs
started as real `plait run` processes with a scripted model."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
from cli_support import git
from mcp import Client, StdioServerParameters
from mcp_support import SECRET, TOOLS, all_events, assert_safe, call, text, until_ended, write_script


def _client(project: Path, env: dict[str, str]) -> Client:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "plait", "mcp"], cwd=project, env={**env, "GH_PAT": SECRET}
    )
    return Client(server, read_timeout_seconds=60)


def test_a_client_starts_a_run_follows_it_and_applies_it(project: Path, env: dict[str, str]) -> None:
    spec = write_script(project, delay=3)
    head = git(project, "rev-parse", "HEAD")

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with _client(project, env) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
            assert "plait://runs/{run_id}/report" in templates
            assert [str(r.uri) for r in (await client.list_resources()).resources] == ["plait://runs"]

            started = await call(client, "start_run", task="write hello", mode="single", model=spec)
            run_id = started["run_id"]
            seen["early"] = await call(client, "run_status", run_id=run_id)
            seen["status"] = await until_ended(client, run_id)
            seen["events"] = await all_events(client, run_id)
            seen["task_diff"] = await call(client, "task_diff", run_id=run_id, task="main")
            seen["diff"] = await call(client, "task_diff", run_id=run_id)
            seen["dry_run"] = await call(client, "apply", run_id=run_id, dry_run=True)
            seen["untouched"] = (git(project, "rev-parse", "HEAD"), (project / "hello.txt").exists())
            report = await client.read_resource(f"plait://runs/{run_id}/report")
            seen["report"] = getattr(report.contents[0], "text", "")
            summary = await client.read_resource(f"plait://runs/{run_id[:12]}/summary")
            seen["summary"] = json.loads(getattr(summary.contents[0], "text", ""))
            seen["runs"] = await call(client, "list_runs")
            unknown = await client.call_tool("run_status", {"run_id": "nope"})
            seen["unknown"] = (unknown.is_error, text(unknown))
            seen["applied"] = await call(client, "apply", run_id=run_id)
        return seen

    seen = anyio.run(main)
    assert_safe(seen)
    early, status = seen["early"], seen["status"]
    # back before the model answered (its reply waits 3 s): read from the log, not the clock of a loaded machine
    assert early["status"] == "running" and early["live"] and early["model_calls"] == 0
    run_id = status["run_id"]
    assert status["status"] == "done" and status["branch"] == f"plait/{run_id}/main"
    assert [(a["id"], a["state"], a["attempt"]) for a in status["agents"]] == [("main", "done", 1)]
    assert [g["stage"] for g in status["gate"]] == ["parse", "semantic", "verify"]
    assert status["result"]["summary"] == "wrote hello ␛[2J"  # what `plait run --json` said, made visible

    kinds = [e["kind"] for e in seen["events"]]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert [e["seq"] for e in seen["events"]] == sorted({e["seq"] for e in seen["events"]})
    said = json.dumps(seen["events"], ensure_ascii=False)
    assert "Model says ␛[2J␛]0;pwned␇ with [REDACTED]" in said

    for diff in (seen["task_diff"], seen["diff"]):
        assert diff["stat"].strip().startswith("hello.txt")
        assert "+hello ␛[31mred␛[0m [REDACTED]" in diff["diff"] and not diff["truncated"]
    assert seen["dry_run"]["mode"] == "fast-forward" and seen["dry_run"]["files"] == ["hello.txt"]
    assert seen["untouched"] == (head, False)
    assert f"done run {run_id}" in seen["report"] and "main: done" in seen["report"]
    assert seen["summary"]["run_id"] == run_id and seen["summary"]["status"] == "done"
    assert [r["run_id"] for r in seen["runs"]["runs"]] == [run_id]
    assert seen["unknown"] == (True, "no run 'nope' in this repository: `plait runs` lists them")
    assert seen["applied"]["head"] == status["commit"] == git(project, "rev-parse", "HEAD")
    assert "hello" in (project / "hello.txt").read_text()


def test_bad_arguments_are_tool_errors_with_plaits_own_line(project: Path, env: dict[str, str]) -> None:
    outside = project.parent / "plan.yaml"
    outside.write_text("tasks: []\n")

    async def main() -> dict[str, str]:
        async with _client(project, env) as client:
            results = {
                "no runs yet": await client.call_tool("list_runs", {}),
                "plan outside": await client.call_tool("start_run", {"task": "x", "plan_file": str(outside)}),
                "plan escapes": await client.call_tool("start_run", {"task": "x", "plan_file": "../plan.yaml"}),
                "remote model": await client.call_tool(
                    "start_run", {"task": "x", "model": "openai-compatible:m@https://evil.example/v1"}
                ),
                "script outside": await client.call_tool("start_run", {"task": "x", "model": f"scripted:{outside}"}),
                "no key": await client.call_tool("start_run", {"task": "x", "model": "openai:gpt-5"}),
                "option branch": await client.call_tool("integrate", {"branches": ["--upload-pack=x"]}),
                "empty task": await client.call_tool("start_run", {"task": "  "}),
            }
            assert not results.pop("no runs yet").is_error
            bad = {}
            for name, result in results.items():
                assert result.is_error, name
                bad[name] = text(result)
            status = await client.call_tool("run_status", {"run_id": "last"})
            assert status.is_error
            bad["no log"] = text(status)
            return bad

    bad = anyio.run(main)
    assert bad["no log"].startswith("no plait runs in")
    for name in ("plan outside", "plan escapes", "script outside"):
        assert "is outside the repository" in bad[name], bad[name]
    assert "would send your OpenAI key to evil.example" in bad["remote model"]
    assert bad["no key"].startswith("OPENAI_API_KEY is not set")  # the started command's own one-line error
    assert "is not a branch or commit name" in bad["option branch"]
    assert bad["empty task"] == "the task is empty: say what to do"
    assert not any("Traceback" in line for line in bad.values())
    assert git(project, "branch", "--list", "plait/*") == ""


ASK_SCRIPT = """
conversations:
  - match: "You lead an investigation"
    turns:
      - tool_calls: [{name: answer, arguments: {answer: "greet adds a space (greet.py:2)", disagreements: ""}}]
"""


def test_ask_and_integrate_run_in_the_background_and_can_be_waited_for(project: Path, env: dict[str, str]) -> None:
    (project / "ask.yaml").write_text(ASK_SCRIPT)
    for branch, path in (("left", "left.txt"), ("right", "right.txt")):
        git(project, "checkout", "-q", "-b", branch, "main")
        (project / path).write_text(f"{branch}\n")
        git(project, "add", path)
        git(project, "commit", "-q", "-m", f"add {path}")
    git(project, "checkout", "-q", "main")

    async def main() -> dict[str, Any]:
        async with _client(project, env) as client:
            asked = await call(client, "ask", question="What does greet do?", model="scripted:ask.yaml", wait_s=60)
            merged = await call(client, "integrate", branches=["left", "right"], onto="main", no_llm=True, wait_s=60)
            status = await call(client, "run_status", run_id=merged["run_id"])
            return {"asked": asked, "merged": merged, "status": status}

    seen = anyio.run(main)
    asked, merged = seen["asked"], seen["merged"]
    assert asked["status"] == "ended" and asked["result"]["answer"] == "greet adds a space (greet.py:2)"
    assert merged["run_id"].startswith("integrate-") and merged["process"]["exit_code"] == 0
    assert [(b["branch"], b["outcome"]) for b in merged["result"]["branches"]] == [
        ("left", "integrated"),
        ("right", "integrated"),
    ]
    assert seen["status"]["status"] == "done" and seen["status"]["branch"] == merged["result"]["branch"]
    assert git(project, "show", f"{merged['result']['branch']}:right.txt") == "right"


def test_a_run_outlives_its_server_and_one_whose_process_died_says_so(project: Path, env: dict[str, str]) -> None:
    spec = write_script(project, delay=1)

    async def main() -> dict[str, Any]:
        async with _client(project, env) as client:
            run_id = (await call(client, "start_run", task="write hello", mode="single", model=spec))["run_id"]
        write_script(project, delay=300)
        async with _client(project, env) as client:  # a new server: the run went on without the first
            ended = await call(client, "run_status", run_id=run_id, wait_s=60)
            slow = (await call(client, "start_run", task="write hello", mode="single", model=spec))["run_id"]
            pid = (await call(client, "run_status", run_id=slow))["process"]["pid"]
            os.kill(pid, signal.SIGKILL)
            dead = await call(client, "run_status", run_id=slow, wait_s=60)
        return {"ended": ended, "dead": dead}

    seen = anyio.run(main)
    ended, dead = seen["ended"], seen["dead"]
    assert ended["status"] == "done" and not ended["live"] and "process" not in ended
    assert ended["result"]["summary"] == "wrote hello ␛[2J"  # kept in .git/plait/mcp for the next server
    assert dead["status"] == "running" and not dead["live"] and dead["process"]["exit_code"] == -signal.SIGKILL
    assert dead["notes"] == ["no process works on this run now: it was stopped, or its process died"]
