"""The places agents work in: the user's repository, worktrees, confined paths and shell commands.

The local shell (and asyncio with it) is imported on first use: the read-only commands find the repository
without it.
"""

from typing import TYPE_CHECKING, Any

from plait.workspace.git import PLAIT_IDENTITY, GitError, Repo, Worktree
from plait.workspace.paths import PathEscape, confine

if TYPE_CHECKING:
    from plait.workspace.command import CommandResult, LocalShell, Shell, cap_output, scrub_env

__all__ = [
    "PLAIT_IDENTITY",
    "CommandResult",
    "GitError",
    "LocalShell",
    "PathEscape",
    "Repo",
    "Shell",
    "Worktree",
    "cap_output",
    "confine",
    "scrub_env",
]

_COMMAND = ("CommandResult", "Shell", "LocalShell", "cap_output", "scrub_env")


def __getattr__(name: str) -> Any:
    if name in _COMMAND:
        from plait.workspace import command

        return getattr(command, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
