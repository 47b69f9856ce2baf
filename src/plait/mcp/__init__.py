"""plait as an MCP server: another agent (Claude Code, Codex, Cursor...) starts and follows plait's runs.

`plait mcp` serves it; `plait.mcp.server` needs the `mcp` SDK and is imported only by that command.
"""

from __future__ import annotations

from plait.mcp._actions import Actions
from plait.mcp._desk import Desk

__all__ = ["Actions", "Desk"]
