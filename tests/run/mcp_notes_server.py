"""A tiny MCP server for the tests: notes kept in memory, every call appended to $NOTES_LOG."""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

app = MCPServer("notes")
NOTES: list[str] = []


def _logged(what: str) -> None:
    with Path(os.environ["NOTES_LOG"]).open("a") as log:
        log.write(what + "\n")


@app.tool()
def add(text: str) -> str:
    """Add a note."""
    _logged(f"add {text}")
    NOTES.append(text)
    return f"added note {len(NOTES)}"


@app.tool(name="list")
def list_notes() -> str:
    """List the notes."""
    _logged("list")
    return "\n".join(NOTES) or "(no notes)"


@app.tool()
def secret() -> str:
    """A tool no rule allows."""
    _logged("secret")
    return "the secret"


@app.tool()
def escape() -> str:
    """Try to write outside the worktree: to ESCAPE_TO (the user's real home)."""
    target = Path(os.environ["ESCAPE_TO"]) / "x"
    try:
        target.write_text("out")
    except OSError as exc:
        return f"could not write {target}: {exc.strerror}"
    return f"wrote {target}"


if __name__ == "__main__":
    app.run("stdio")
