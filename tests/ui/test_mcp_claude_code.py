"""The real Claude Code CLI with plait as its MCP server: its model (a local streaming server playing a script)
has it start a plait run, wait for it and read its diff, through `plait mcp` over stdio."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import git
from mcp_support import SECRET, write_script

from anthropic_stream import StreamServer

pytestmark = pytest.mark.skipif(
    shutil.which("claude") is None,
    reason="Claude Code is not installed (npm install -g @anthropic-ai/claude-code; .ci/run installs it)",
)

STEPS = [
    ("mcp__plait__start_run", {"task": "write hello", "mode": "single", "model": "scripted:agent.yaml"}),
    ("mcp__plait__run_status", {"run_id": "last", "wait_s": 60}),
    ("mcp__plait__task_diff", {"run_id": "last"}),
]


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's model: wait for plait's tools, then call them in turn; every other request gets text."""
    tools = {t.get("name") for t in body.get("tools", [])}
    if not tools:  # the session's title and other side requests
        return {"text": "plait run"}
    if "mcp__plait__start_run" not in tools:
        return {"tool_calls": [{"name": "WaitForMcpServers", "arguments": {}}]}
    called = [
        block["name"]
        for message in body["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use" and block["name"].startswith("mcp__plait__")
    ]
    if len(called) < len(STEPS):
        name, arguments = STEPS[len(called)]
        return {"tool_calls": [{"name": name, "arguments": arguments}]}
    return {"text": "plait wrote hello.txt on its branch"}


def _transcript(stdout: str) -> tuple[list[str], list[str]]:
    """The tool calls Claude Code made and the text of each tool result, from its stream-json output."""
    calls: list[str] = []
    results: list[str] = []
    for line in stdout.splitlines():
        event = json.loads(line)
        if event.get("type") not in ("assistant", "user"):
            continue
        for block in event["message"]["content"]:
            if block.get("type") == "tool_use":
                calls.append(block["name"])
            elif block.get("type") == "tool_result":
                content = block.get("content")
                parts = content if isinstance(content, list) else [{"text": content}]
                results.append("".join(str(p.get("text", "")) for p in parts))
    return calls, results


def test_claude_code_starts_follows_and_reads_a_plait_run(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    write_script(project, delay=0)
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "plait", "mcp", "--repo", str(project)]}
    config.write_text(json.dumps({"mcpServers": {"plait": server}}))
    with StreamServer(_reply) as model:
        cc_env = {
            **env,
            "GH_PAT": SECRET,
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            **({"IS_SANDBOX": "1"} if os.geteuid() == 0 else {}),  # bypassPermissions is refused to root otherwise
        }
        argv = ["claude", "-p", "Delegate to plait: write hello.txt", "--output-format", "stream-json", "--verbose"]
        argv += ["--permission-mode", "bypassPermissions", "--mcp-config", str(config), "--strict-mcp-config"]
        done = subprocess.run(argv, cwd=project, env=cc_env, capture_output=True, text=True, timeout=240)
        sent = json.dumps(model.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    calls, results = _transcript(done.stdout)
    assert [c for c in calls if c.startswith("mcp__plait__")] == [name for name, _ in STEPS]
    started, status, diff = (json.loads(r) for r in results[-3:])
    assert status["run_id"] == started["run_id"] and status["status"] == "done" and not status["live"]
    assert "+hello ␛[31mred␛[0m [REDACTED]" in diff["diff"]
    assert SECRET not in done.stdout and SECRET not in sent  # neither Claude Code nor its model saw it
    assert git(project, "rev-parse", f"plait/{started['run_id']}/main") == status["commit"]
