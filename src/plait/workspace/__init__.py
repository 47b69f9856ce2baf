"""The places agents work in: the user's repository, worktrees, confined paths and shell commands."""

from plait.workspace.command import CommandResult, CommandRunner, LocalRunner, cap_output, scrub_env
from plait.workspace.git import PLAIT_IDENTITY, GitError, Repo, Worktree
from plait.workspace.paths import PathEscape, confine

__all__ = [
    "PLAIT_IDENTITY",
    "CommandResult",
    "CommandRunner",
    "GitError",
    "LocalRunner",
    "PathEscape",
    "Repo",
    "Worktree",
    "cap_output",
    "confine",
    "scrub_env",
]
