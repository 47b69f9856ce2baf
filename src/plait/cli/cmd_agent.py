"""`plait agent RUN TASK`: step into one agent of a run, from any terminal (see `plait.run.steer`).

`--say TEXT` tells it something at its next model call, `--pause`/`--resume` hold it before that call,
`--stop` ends its attempt and drops the task (`--retry`: tries it again from its work), and `--shell` opens
`$SHELL` in its worktree: read-only (under bubblewrap) while the task runs. Without bubblewrap a running task's
worktree is not opened: a shell there could change the files under the agent's feet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plait.cli._options import RepoOpt, RunArg
from plait.cli._steering import steer_logged
from plait.errors import StateError, UsageError
from plait.run.steer import Action
from plait.ui._agent_shell import open_shell, task_state
from plait.ui._common import open_store, out, resolve_run
from plait.ui._safe import escaped
from plait.workspace import Repo

__all__ = ["agent"]


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


def agent(
    run_ref: RunArg,
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
        state = task_state(run_id, events, task)
        if shell:
            raise typer.Exit(open_shell(run_id, events, task, command or [], state=state))
        if state in ("ended", "done", "dropped"):
            where = "the run has ended" if state == "ended" else f"the task is {state}"
            raise StateError(f"task '{task}' of run {run_id} cannot be steered: {where}")
        told = steer_logged(store, repo.root, run_id, task, action or "say", text=say or "", retry=retry)
    finally:
        store.close()
    out.print(escaped(told))
