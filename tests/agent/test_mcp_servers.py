"""MCP servers for plait's agents: what configures them, what an untrusted repository may say, how calls are checked."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from plait._mcp_config import McpServer
from plait.agent._mcp_json import mcp_json_servers, run_servers
from plait.agent.mcp_servers import McpTools
from plait.agent.tools import Toolbox
from plait.agent.toolset import Toolset
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ToolCall, ToolSpec
from plait.sandbox_settings import McpRule, SandboxSettings
from plait.settings import load_settings
from plait.workspace import LocalShell
from plait.workspace.policy import Policy

SERVER = '[mcp_servers.notes]\ncommand = ["python", "notes.py"]\n'


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    return tmp_path / "home" / ".config" / "plait"


def test_an_untrusted_repository_file_cannot_add_a_server_nor_allow_its_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _home(tmp_path, monkeypatch)
    rule = (
        '[[sandbox.mcp]]\nverdict = "allow"\ntool = "mcp__*"\n[[sandbox.mcp]]\nverdict = "deny"\ntool = "mcp__x__y"\n'
    )
    (tmp_path / ".plait.toml").write_text(SERVER + rule)

    loaded = load_settings(tmp_path, report=None)

    assert loaded.settings.mcp_servers == {}
    assert [r.verdict for r in loaded.settings.sandbox.mcp] == ["deny"]
    assert "mcp_servers.notes" in loaded.ignored and "sandbox.mcp[0]" in loaded.ignored


def test_an_untrusted_repository_file_may_keep_the_users_server_but_not_change_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _home(tmp_path, monkeypatch)
    config.mkdir(parents=True)
    (config / "config.toml").write_text(SERVER + '[mcp_servers.docs]\ncommand = ["docs"]\n')
    (tmp_path / ".plait.toml").write_text(SERVER + '[mcp_servers.docs]\ncommand = ["evil"]\n')

    loaded = load_settings(tmp_path, report=None)

    assert list(loaded.settings.mcp_servers) == ["notes"]  # the file's table leaves the user's docs out, as it may
    assert "mcp_servers.docs" in loaded.ignored and "mcp_servers.notes" not in loaded.ignored


def _repo_with_mcp_json(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    root.mkdir()
    entry = {"command": "node", "args": ["server.js"], "env": {"A": "1"}}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"js": entry, "web": {"url": "http://x"}}}))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    return root, head


def test_mcp_json_servers_start_only_in_a_trusted_repository(tmp_path: Path) -> None:
    root, head = _repo_with_mcp_json(tmp_path)
    mine = {"notes": McpServer(command=["python", "notes.py"])}

    untrusted = run_servers(mine, root, head, trusted=False)
    trusted = run_servers(mine, root, head, trusted=True)

    assert list(untrusted.servers) == ["notes"] and untrusted.ignored == [".mcp.json:js"]
    assert "plait trust" in untrusted.why
    assert trusted.servers["js"] == McpServer(command=["node", "server.js"], env={"A": "1"})
    assert "web" not in trusted.servers  # a url server is not started for agents


def test_mcp_json_is_read_from_the_repository_whatever_git_s_environment_points_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GIT_DIR left in the environment (a hook, a wrapper) names another repository; plait reads its own."""
    root, head = _repo_with_mcp_json(tmp_path)
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))

    found = mcp_json_servers(root, head)

    assert set(found[0]) == {"js"} and found[1] == ""


def _tools(tmp_path: Path, rules: list[McpRule]) -> Toolset:
    servers = McpTools(
        {"notes": McpServer(command=["/nonexistent/server"])},
        runner=LocalShell(),
        worktree=tmp_path,
        policy=Policy.from_settings(SandboxSettings(mcp=rules)),
        log=RunLog(SQLiteEventStore(tmp_path / "events.db"), "r1"),
        agent="main",
        attempt=1,
    )
    inner = Toolbox(tmp_path, LocalShell(), read_only=True).only({"read_file", "finish"})
    return inner | servers.offer([ToolSpec(name="mcp__notes__add", description="", parameters={"type": "object"})])


def test_a_call_must_send_an_object_and_be_allowed_before_any_server_is_reached(tmp_path: Path) -> None:
    tools = _tools(tmp_path, [McpRule(verdict="ask", tool="mcp__notes__*")])

    assert [s.name for s in tools.specs()] == ["read_file", "mcp__notes__add", "finish"]
    bad = asyncio.run(tools.execute(ToolCall(id="1", name="mcp__notes__add", arguments=None, raw_arguments="[1]")))
    assert bad.format_error and "not a JSON object" in bad.output
    unknown = asyncio.run(tools.execute(ToolCall(id="2", name="mcp__notes__nope", arguments={})))
    assert unknown.format_error and "mcp__notes__add" in unknown.output
    asked = asyncio.run(tools.execute(ToolCall(id="3", name="mcp__notes__add", arguments={"text": "x"})))
    assert asked.is_error and "plait did not call mcp__notes__add" in asked.output
    assert not (tmp_path / ".plait-mcp").exists()  # no server was started for any of them


def test_an_allowed_call_to_a_server_that_cannot_start_is_an_observation(tmp_path: Path) -> None:
    tools = _tools(tmp_path, [McpRule(verdict="allow", tool="mcp__notes__add")])

    out = asyncio.run(tools.execute(ToolCall(id="1", name="mcp__notes__add", arguments={"text": "x"})))

    assert out.is_error and "MCP server notes" in out.output and "ended before it answered" in out.output
