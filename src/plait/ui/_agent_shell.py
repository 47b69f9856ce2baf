"""A shell in one task's worktree, as `plait agent RUN TASK --shell` and the live view's `o` open it: read-only
(under bubblewrap) while the task runs. Without bubblewrap a running task's worktree is not opened: a shell
there could change the files under the agent's feet."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from plait.errors import EnvironmentProblem, StateError, UsageError
from plait.events.types import Event, RunFinished, TaskStarted
from plait.ui._reading import err
from plait.ui._safe import escaped
from plait.ui.runview import RunView

__all__ = ["open_shell", "task_state"]


def task_state(run_id: str, events: list[Event], task: str) -> str:
    """The task's state, as `plait status` shows it; a usage error for a task the run does not have."""
    view = RunView.of(run_id, events)
    if task not in view.agents:
        known = ", ".join(view.plan or sorted(view.agents)) or "none yet"
        raise UsageError(f"run {run_id} has no task '{task}': its tasks are {known}")
    ended = [e for e in events if isinstance(e, RunFinished)]
    if ended and ended[-1].status != "interrupted":
        return "ended"
    return view.agents[task].state


def open_shell(
    run_id: str, events: list[Event], task: str, command: Sequence[str] = (), *, state: str | None = None
) -> int:
    """`$SHELL` (or `command`) in the task's worktree, read-only while it runs (`state`, read from `events` when
    not given).

    Returns the shell's exit code; a usage, state or environment error when it cannot be opened.
    """
    state = task_state(run_id, events, task) if state is None else state
    started = [e for e in events if isinstance(e, TaskStarted) and e.agent == task]
    if not started or not Path(started[-1].worktree).is_dir():
        raise StateError(f"task '{task}' of run {run_id} has no worktree on this machine")
    worktree = started[-1].worktree
    shell = os.environ.get("SHELL") or "/bin/sh"
    argv = [shell, "-c", shlex.join(command)] if command else [shell]
    if state in ("running", "paused"):
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise EnvironmentProblem(
                f"task '{task}' is running and bubblewrap (bwrap) is not installed to open its worktree read-only: "
                "install it, or wait until the task ends"
            )
        argv = [bwrap, "--dev-bind", "/", "/", "--ro-bind", worktree, worktree, "--chdir", worktree, *argv]
        if not command:
            err.print(f"[dim]{escaped(worktree)}: read-only while {escaped(task)} runs; exit to leave[/]")
    try:
        return subprocess.run(argv, cwd=worktree, check=False).returncode
    except OSError as exc:
        raise EnvironmentProblem(f"cannot start {argv[0]}: {exc.strerror}") from exc
