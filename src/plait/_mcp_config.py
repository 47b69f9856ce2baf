"""The `mcp_servers` setting: the MCP servers every agent gets (the repository's `.mcp.json` adds to them when the
user trusts it: `plait.agent._mcp_json`).

    [mcp_servers.notes]                    # .plait.toml or the user's config.toml
    command = ["python", "notes_server.py"]
    env = { NOTES_DIR = "notes" }
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SERVER_NAME", "McpServer"]

SERVER_NAME = r"^[A-Za-z0-9_-]{1,32}$"
"""A server's name, as it appears in its tools' names (`mcp__<server>__<tool>`)."""


class McpServer(BaseModel):
    """One MCP server speaking stdio, started in each agent's sandbox with the worktree as its directory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: list[str] = Field(min_length=1)
    """The server's argv, such as `["npx", "-y", "@scope/server"]`; run as the agent's commands are."""
    env: dict[str, str] = {}
    """Variables set for the server, besides the sandbox's allow-list (kept out of the command line and the log)."""
