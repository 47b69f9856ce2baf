"""Commit messages as git cleans them up, made in this process rather than by a `git stripspace` process."""

from __future__ import annotations

__all__ = ["stripspace"]


def stripspace(message: str) -> str:
    """What `git stripspace` makes of a commit message, without a git process: trailing blanks (space, tab, CR)
    cut from every line, runs of empty lines made one, none at either end, and a newline after the last line."""
    lines: list[str] = []
    empties = 0
    for line in message.split("\n"):
        line = line.rstrip(" \t\r")
        if not line:
            empties += 1
            continue
        if empties and lines:
            lines.append("")
        empties = 0
        lines.append(line)
    return "".join(f"{line}\n" for line in lines)
