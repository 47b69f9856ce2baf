"""`plait run --detach`: the same run started again in the background, in a session of its own.

Its output goes to `.git/plait/logs/RUN.log`; this process prints the run id and how to follow it, and returns.
"""

from __future__ import annotations

import json
import subprocess
import sys

from plait.cli._argv import COMMAND_LINE
from plait.errors import EnvironmentProblem, UsageError
from plait.run.base import new_run_id
from plait.ui._reading import out
from plait.workspace import Repo

__all__ = ["detach"]


def _without_detach(args: list[str]) -> list[str]:
    at = next((i for i, a in enumerate(args) if a == "--detach"), None)
    return args if at is None else args[:at] + args[at + 1 :]


def detach(repo: Repo, task: str, *, as_json: bool, review: bool) -> int:
    """Start this `plait run` again in the background (the task on its stdin, for `-`); returns the exit code."""
    if review:
        raise UsageError("--review asks on this terminal: it cannot go with --detach")
    run_id = new_run_id()
    logs = repo.plait_dir() / "logs"
    path = logs / f"{run_id}.log"
    # the base was confirmed here: the background run does not ask, and has no screen for the live view
    again = _without_detach(list(COMMAND_LINE.get()))
    argv = [sys.executable, "-m", "plait", *again, "--run-id", run_id, "--no-tui", "--yes"]
    try:
        logs.mkdir(parents=True, exist_ok=True)
        with path.open("w") as log:
            child = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, text=True, start_new_session=True
            )
    except OSError as exc:
        raise EnvironmentProblem(f"cannot start the run in the background: {exc}") from exc
    assert child.stdin is not None
    try:
        child.stdin.write(task)
        child.stdin.close()
    except BrokenPipeError:  # it had no use for stdin and is gone already: its log says why
        pass
    if as_json:
        out.print_json(json.dumps({"run_id": run_id, "log": str(path), "pid": child.pid}))
        return 0
    out.print(f"run {run_id} goes on in the background; its output: {path}", markup=False, highlight=False)
    out.print(f"  watch it:  plait attach {run_id}   (q leaves the view; the run goes on)", markup=False)
    out.print(f"  its log:   plait log {run_id} -f", markup=False)
    out.print(f"  steer it:  plait agent {run_id} TASK --say/--pause/--stop", markup=False)
    return 0
