"""Driving `plait mcp` with the MCP SDK's own client: scripts for the runs it starts, and waiting on their state."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.types import CallToolResult

SECRET = "Zq8mN3xW7pL2vK9tR4yB6cJ1"
"""The value of GH_PAT in the server's environment: it must never come back."""

HOSTILE_SCRIPT = rf"""
turns:
  - delay: DELAY
    text: "Model says \e[2J\e]0;pwned\a with {SECRET}"
    tool_calls:
      - name: write_file
        arguments: {{path: hello.txt, content: "hello \e[31mred\e[0m {SECRET}\n"}}
  - tool_calls: [{{name: finish, arguments: {{summary: "wrote hello \e[2J"}}}}]
"""

TOOLS = {"start_run", "run_status", "run_events", "task_diff", "integrate", "apply", "ask", "list_runs"}


def write_script(project: Path, delay: float) -> str:
    """A scripted agent (inside the repository, where the server accepts it) that writes hello.txt; its model spec."""
    (project / "agent.yaml").write_text(HOSTILE_SCRIPT.replace("DELAY", str(delay)))
    return "scripted:agent.yaml"


def text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    assert json.loads(text(result)) == result.structured_content
    return result.structured_content


async def until_ended(client: Client, run_id: str, seconds: float = 90) -> dict[str, Any]:
    """run_status, polled until the run is over and its process gone (or the deadline)."""
    deadline = time.monotonic() + seconds
    while True:
        status = await call(client, "run_status", run_id=run_id)
        if status["status"] != "running" and not status["live"]:
            return status
        assert time.monotonic() < deadline, status
        await anyio.sleep(0.1)


async def all_events(client: Client, run_id: str) -> list[dict[str, Any]]:
    """Every event of the run, a page at a time, as a client follows it."""
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = await call(client, "run_events", run_id=run_id, after=after, limit=7)
        events += page["events"]
        after = page["next_after"]
        if not page["more"]:
            assert page["run_finished"]
            return events


def assert_safe(value: Any, where: str = "") -> None:
    """No string in `value` holds a control character a terminal would obey, or the secret."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert_safe(item, f"{where}.{key}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            assert_safe(item, f"{where}[{n}]")
    elif isinstance(value, str):
        assert SECRET not in value, where
        for bad in ("\x1b", "\x07", "\x9b", "\r"):
            assert bad not in value, (where, bad, value[:200])
