"""How plait starts git: options and environment that keep its git from running code anyone but the user configured.

plait runs git outside the sandbox, on trees agents wrote. The user's own configuration (system, global, the
repository's `.git/config`) is trusted; nothing found inside a work tree is. So every git plait starts gets:

- no hooks, no fsmonitor, no signing, no pager, no editor;
- no recursion into submodules (`submodule.recurse`, `diff.ignoreSubmodules`, `status.submoduleSummary`), carried to
  any git it starts itself through GIT_CONFIG_PARAMETERS; these do not stop `git add` from running `git status`
  inside a populated submodule, which is why plait's staging leaves gitlinks and nested repositories out by
  pathspec (see `Repo.stage_all`);
- `--no-ext-diff --no-textconv` on every `diff`, `show` and `log`, so that a diff plait shows is git's own text.

git in a worktree is told its git directory (GIT_DIR, from git's records in the shared `.git`) rather than
finding it through the worktree's `.git` link, which the worktree's commands could rewrite (`Repo.location`).

The system configuration is kept (GIT_CONFIG_NOSYSTEM is not set): it is the machine's administrator's, as trusted
as the user's, and it is where filters such as git-lfs are usually declared; dropping it would break checkouts.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from plait.errors import EnvironmentProblem, PlaitError

__all__ = ["GitError", "argv", "environment", "first_line", "run"]

_CONFIG = (
    "--no-pager",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "submodule.recurse=false",
    "-c",
    "diff.ignoreSubmodules=all",
    "-c",
    "status.submoduleSummary=false",
)
_PLAIN_DIFF = ("diff", "show", "log")
_INHERITED_GIT_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


def argv(args: tuple[str, ...] | list[str]) -> list[str]:
    """The command line of `git ARGS` with plait's safety options."""
    args = list(args)
    if args and args[0] in _PLAIN_DIFF:
        args[1:1] = ["--no-ext-diff", "--no-textconv"]
    return ["git", *_CONFIG, *args]


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for git: no inherited repository location, no prompts, no pager or editor."""
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_GIT_VARS}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_PAGER="cat", GIT_EDITOR=":", GIT_OPTIONAL_LOCKS="0")
    env.update(extra or {})
    return env


class GitError(PlaitError):
    """A git command failed; the message names the command and git's first line of complaint."""

    exit_code = 3

    def __init__(self, command: str, detail: str) -> None:
        super().__init__(f"git {command} failed: {detail}")
        self.command = command
        self.detail = detail


def first_line(text: str, fallback: str) -> str:
    """The first non-blank line of `text`, stripped, or `fallback`."""
    return next((line.strip() for line in text.splitlines() if line.strip()), fallback)


def run(
    args: tuple[str, ...], cwd: Path, env: Mapping[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `git ARGS` safely in `cwd`; text in and out, bytes that are not UTF-8 kept as surrogates."""
    try:
        return subprocess.run(
            argv(args),
            cwd=cwd,
            env=environment(env),
            input=input,
            capture_output=True,
            text=True,
            errors="surrogateescape",
            check=False,
        )
    except FileNotFoundError as exc:
        if shutil.which("git") is None:
            raise EnvironmentProblem("git is not installed or not on PATH: install git and try again") from exc
        raise EnvironmentProblem(f"{cwd} does not exist: run plait from a git checkout") from exc
    except OSError as exc:
        raise GitError(shlex.join(args), str(exc)) from exc
