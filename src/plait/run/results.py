"""A run's result as the commands that take it (`apply`, `review`, `pr`) find it: one place, one answer."""

from __future__ import annotations

from plait.errors import EnvironmentProblem
from plait.events.runlog import RunLog
from plait.events.types import RunFinished
from plait.reconcile.queue import integration_branch
from plait.run._lead import run_kind
from plait.workspace import Repo

__all__ = ["has_result", "result_branch"]


def has_result(log: RunLog) -> bool:
    """Whether the run is a change that ended with a commit: `last` for `apply`, `review` and `pr` is the latest."""
    if run_kind(log):
        return False
    return any(isinstance(e, RunFinished) and e.commit for e in log.events(kinds=["run_finished"]))


def result_branch(repo: Repo, log: RunLog, *, to: str = "apply") -> str:
    """The run's latest integration branch (`plait review --drop` makes a new one), else its one agent's branch.

    Raises:
        EnvironmentProblem: The run has no verified result (`to` says what the user wanted to do with it).
    """
    run_id = log.run_id
    finished = [e for e in log.events(kinds=["run_finished"]) if isinstance(e, RunFinished)]
    latest = next((e.branch for e in reversed(finished) if e.branch.startswith(integration_branch(run_id))), "")
    if latest and repo.branch_exists(latest):
        return latest
    if repo.branch_exists(integration_branch(run_id)):
        return integration_branch(run_id)
    single = f"plait/{run_id}/main"
    if repo.branch_exists(single) and finished and finished[-1].status == "done":
        return single
    state = finished[-1].status if finished else "unfinished"
    raise EnvironmentProblem(f"run {run_id} has no verified result to {to} (it is {state})")
