"""The one way plait runs git: `run` (text) and `run_bytes` (bytes), each with the same hardened configuration.

No other module of plait starts a git process (a test scans the code for one); asynchronous code calls these
from a worker thread (`asyncio.to_thread`), as it does every other blocking call.

plait runs git outside the sandbox, on trees agents wrote. The user's own configuration (system, global, the
repository's `.git/config`) is trusted; nothing found inside a work tree is. So every git plait starts, in either
mode, gets:

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
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plait.errors import EnvironmentProblem, PlaitError

__all__ = ["GitError", "first_line", "run", "run_bytes"]

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
_SPAWN_TRIES = 6


def _argv(args: tuple[str, ...] | list[str]) -> list[str]:
    """The command line of `git ARGS` with plait's safety options."""
    args = list(args)
    if args and args[0] in _PLAIN_DIFF:
        args[1:1] = ["--no-ext-diff", "--no-textconv"]
    return ["git", *_CONFIG, *args]


def _environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
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
    done: subprocess.CompletedProcess[str] = _spawn(args, cwd, env, input, text=True, errors="surrogateescape")
    return done


def run_bytes(
    args: tuple[str, ...], cwd: Path, env: Mapping[str, str] | None = None, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run `git ARGS` safely in `cwd`; bytes in and out (blobs, trees, paths that need not be UTF-8)."""
    done: subprocess.CompletedProcess[bytes] = _spawn(args, cwd, env, input)
    return done


def _spawn(args: tuple[str, ...], cwd: Path, env: Mapping[str, str] | None, input: Any, **mode: Any) -> Any:
    """Start git and wait for it; a fork refused for lack of resources (EAGAIN) is transient, so it is tried again."""
    for attempt in range(_SPAWN_TRIES):
        try:
            return subprocess.run(
                _argv(args), cwd=cwd, env=_environment(env), input=input, capture_output=True, check=False, **mode
            )
        except BlockingIOError as exc:
            if attempt == _SPAWN_TRIES - 1:
                raise GitError(shlex.join(args), str(exc)) from exc
            time.sleep(0.05 * 2**attempt)
        except FileNotFoundError as exc:
            if shutil.which("git") is None:
                raise EnvironmentProblem("git is not installed or not on PATH: install git and try again") from exc
            raise EnvironmentProblem(f"{cwd} does not exist: run plait from a git checkout") from exc
        except OSError as exc:
            raise GitError(shlex.join(args), str(exc)) from exc
    raise AssertionError("unreachable")
