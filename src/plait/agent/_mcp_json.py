"""The repository's `.mcp.json` at the run's base: its stdio servers, which an agent gets when the user trusts the
repository (`plait trust`), beside the `mcp_servers` setting's (`plait._mcp_config`).

    {"mcpServers": {"notes": {"command": "python", "args": ["notes_server.py"], "env": {}}}}

The file is the repository's, as an untrusted `.plait.toml`'s servers are (`plait._repo_file`). Where a name is in
both, the setting wins.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from plait._mcp_config import McpServer
from plait.workspace import gitcall

__all__ = ["MCP_JSON", "RunServers", "mcp_json_servers", "run_servers"]

MCP_JSON = ".mcp.json"


class RunServers(BaseModel):
    """The servers a run's agents get, and what was left out and why."""

    servers: dict[str, McpServer] = {}
    ignored: list[str] = []
    why: str = ""


def _from_mcp_json(text: str) -> tuple[dict[str, McpServer], str]:
    try:
        data = json.loads(text)
        entries = data["mcpServers"]
        if not isinstance(entries, dict):
            raise TypeError("mcpServers is not an object")
        out = {}
        for name, entry in entries.items():
            if "url" in entry:
                continue  # only stdio servers are started for agents
            argv = [entry["command"], *entry.get("args", [])]
            out[str(name)] = McpServer(command=argv, env=entry.get("env", {}))
        return out, ""
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        return {}, f"{MCP_JSON} is not valid ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"


def mcp_json_servers(root: Path, commit: str) -> tuple[dict[str, McpServer], str]:
    """The stdio servers of `.mcp.json` at `commit`, and what was wrong with the file ('' when nothing)."""
    done = gitcall.run(("show", f"{commit}:{MCP_JSON}"), root)  # plait's own git, whatever the environment says
    if done.returncode != 0:
        return {}, ""
    return _from_mcp_json(done.stdout)


def run_servers(configured: dict[str, McpServer], root: Path, commit: str, *, trusted: bool) -> RunServers:
    """The setting's servers, and `.mcp.json`'s when the repository is trusted (else they are named as ignored)."""
    found, problem = mcp_json_servers(root, commit)
    extra = {name: server for name, server in found.items() if name not in configured}
    if not trusted and extra:
        names = [f"{MCP_JSON}:{name}" for name in extra]
        why = f"the repository is not trusted: review {MCP_JSON}, then `plait trust` to start its servers"
        return RunServers(servers=dict(configured), ignored=names, why=why)
    return RunServers(servers={**extra, **configured}, ignored=[MCP_JSON] if problem else [], why=problem)
