"""`plait agent RUN TASK`: step into one agent of a run, from any terminal (see `plait.run.steer`).

`--say TEXT` tells it something at its next model call, `--pause`/`--resume` hold it before that call,
`--stop` ends its attempt and drops the task (`--retry`: tries it again from its work), and `--shell` opens
`$SHELL` in its worktree: read-only (under bubblewrap) while the task runs. Without bubblewrap a running task's
worktree is not opened: a shell there could change the files under the agent's feet.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from plait.errors import EnvironmentProblem, StateError, UsageError
from plait.events.runlog import RunLog
from plait.events.types import Event, RunFinished, TaskStarted
from plait.run.steer import Action, steer
from plait.settings import load_settings
from plait.ui._common import RepoOpt, err, open_store, out, resolve_run, run_store
from plait.ui._safe import escaped
from plait.ui.runview import RunView
from plait.workspace import Repo

__all__ = ["open_shell", "register"]


def _action(say: str | None, pause: bool, resume: bool, stop: bool, retry: bool) -> Action | None:
    flags: list[tuple[Action, bool]] = [("pause", pause), ("resume", resume), ("stop", stop or retry)]
    chosen = [a for a, on in flags if on]
    if say is not None:
        if not say.strip():
            raise UsageError("--say needs a message: say what the agent should hear")
        chosen.insert(0, "say")
    if len(chosen) > 1:
        raise UsageError("give one of --say, --pause, --resume, --stop or --retry at a time")
    return chosen[0] if chosen else None


def _task_state(run_id: str, events: list[Event], task: str) -> str:
    """The task's state, as `plait status` shows it; a usage error for a task the run does not have."""
    view = RunView.of(run_id, events)
    if task not in view.agents:
        known = ", ".join(view.plan or sorted(view.agents)) or "none yet"
        raise UsageError(f"run {run_id} has no task '{task}': its tasks are {known}")
    ended = [e for e in events if isinstance(e, RunFinished)]
    if ended and ended[-1].status != "interrupted":
        return "ended"
    return view.agents[task].state


def _shell(run_id: str, events: list[Event], task: str, state: str, command: list[str]) -> int:
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


def open_shell(run_id: str, events: list[Event], task: str, command: Sequence[str] = ()) -> int:
    """`plait agent RUN TASK --shell`: `$SHELL` (or `command`) in the task's worktree, read-only while it runs.

    Returns the shell's exit code; a usage, state or environment error when it cannot be opened.
    """
    return _shell(run_id, events, task, _task_state(run_id, events, task), list(command))


def agent(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="A run id, a unique prefix of one, or `last`.")],
    task: Annotated[str, typer.Argument(help="The task whose agent to step into.")],
    command: Annotated[
        list[str] | None, typer.Argument(metavar="[-- COMMAND...]", help="With --shell: run this instead.")
    ] = None,
    say: Annotated[str | None, typer.Option("--say", help="A message the agent reads at its next model call.")] = None,
    pause: Annotated[bool, typer.Option("--pause", help="Hold the agent before its next model call.")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Let a paused agent go on.")] = False,
    stop: Annotated[bool, typer.Option("--stop", help="End its attempt and drop the task.")] = False,
    retry: Annotated[bool, typer.Option("--retry", help="End its attempt and try the task again.")] = False,
    shell: Annotated[
        bool, typer.Option("--shell", help="Open $SHELL in its worktree, read-only while it runs.")
    ] = False,
    repo_path: RepoOpt = Path(),
) -> None:
    """Step into one agent of a run: tell it something, pause, resume or stop it, or look at its worktree."""
    action = _action(say, pause, resume, stop, retry)
    if (action is None) == (not shell):
        raise UsageError("give one of --say, --pause, --resume, --stop, --retry or --shell")
    if command and not shell:
        raise UsageError("a command after the task runs only with --shell")
    repo = Repo.discover(repo_path)
    store = open_store(repo, create=False)
    try:
        run_id = resolve_run(store, run_ref)
        events = store.events(run_id, agent=None)
        state = _task_state(run_id, events, task)
        if shell:
            raise typer.Exit(_shell(run_id, events, task, state, command or []))
        if state in ("ended", "done", "dropped"):
            where = "the run has ended" if state == "ended" else f"the task is {state}"
            raise StateError(f"task '{task}' of run {run_id} cannot be steered: {where}")
        steered = run_store(store, load_settings(repo.root, report=None).settings)
        told = steer(RunLog(steered, run_id), task, action or "say", text=say or "", retry=retry)
    finally:
        store.close()
    out.print(escaped(told))


def register(app: typer.Typer) -> None:
    app.command()(agent)
