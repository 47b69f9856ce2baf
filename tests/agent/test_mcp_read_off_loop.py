"""An attempt's MCP servers are looked up (`.mcp.json` read from the run's base with git) off the event loop: every
other agent works on that loop, and a git process started there would hold all of them up while it runs."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from plait.agent.loop import Agent
from plait.agent.mcp_servers import McpAttempt, serve
from plait.agent.tools import Toolbox
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import PriceTable, ScriptedModel
from plait.settings import Settings
from plait.workspace import LocalShell, Repo


def test_the_mcp_servers_lookup_lets_the_other_agents_run(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `git show` of `.mcp.json` waits until another task on the loop has run (or gives up after 10 s)."""
    real = shutil.which("git")
    assert real is not None
    flag, gave_up = tmp_path / "other-ran", tmp_path / "gave-up"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(
        "#!/bin/bash\n"
        'if [[ " $* " == *".mcp.json"* ]]; then i=0; '
        f"while [ ! -e {flag} ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
        f"[ -e {flag} ] || touch {gave_up}; fi\n"
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    store = SQLiteEventStore(tmp_path / "e.db")
    log = RunLog(store, "r")
    finish = {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}
    agent = Agent(
        log=log,
        agent_id="a",
        model=ScriptedModel([finish]),
        toolbox=Toolbox(repo.root, LocalShell(), command_timeout=30, output_limit=4000),
        prices=PriceTable(),
        system="You are a test agent.",
    )
    at = McpAttempt(Settings(), repo.root, repo.head(), log, "a", 1, LocalShell(), repo.root)

    async def other() -> None:
        await asyncio.sleep(0)
        flag.touch()

    async def both() -> bool:
        result, _ = await asyncio.gather(serve(at, agent, "finish"), other())
        return result.ok

    assert asyncio.run(both())
    assert not gave_up.exists()
    store.close()
