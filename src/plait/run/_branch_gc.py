"""Which `plait/RUN/...` branches `plait gc` removes, and why it keeps the others.

The rule, one branch at a time:

- a branch of a run this log does not know, or of an unfinished run (`plait resume` needs it): kept;
- an integration branch (`plait/RUN/integration...`), the result `plait apply` takes: kept;
- a branch that holds no commit of its own (its tip is where its run or its attempt began, such as the
  `main` branch of a run that failed before its first model call): removed;
- a single run's `main` branch with work on it: kept, it is that run's result (or its only copy);
- a task branch of a run whose result was applied: removed, its work is in your branch;
- a task branch of any other ended run: kept, `plait review --drop` integrates again from it, and a failed
  run's branches are the only copy of its work (`git branch -D` them when you do not want it).
"""

from __future__ import annotations

from dataclasses import dataclass

from plait.run.state import RunState
from plait.workspace import Repo

__all__ = ["BranchVerdict", "judge_branches"]


@dataclass(frozen=True)
class BranchVerdict:
    """A plait branch, whether gc removes it, and why."""

    branch: str
    remove: bool
    why: str


def _judge(branch: str, tip: str, state: RunState | None, applied: bool) -> BranchVerdict:
    if state is None:
        return BranchVerdict(branch, False, "not a run in this repository's log")
    run_id = state.run_id
    if state.unfinished:
        return BranchVerdict(branch, False, f"run unfinished: `plait resume {run_id}` needs it")
    rest = branch.removeprefix(f"plait/{run_id}/")
    if rest.startswith("integration"):
        return BranchVerdict(branch, False, "the run's result")
    starts = {state.started.base_commit} if state.started is not None else set()
    if tip in starts | set(state.bases.values()):
        return BranchVerdict(branch, True, "no commit on it: the run ended before it made one")
    if rest == "main":
        return BranchVerdict(branch, False, "the run's result (one agent's branch)")
    if applied:
        return BranchVerdict(branch, True, "a task branch of a run applied to your branch")
    status = state.finished.status if state.finished is not None else "ended"
    if status in ("done", "incomplete"):
        return BranchVerdict(branch, False, f"run not applied yet: `plait review {run_id}` may integrate again")
    return BranchVerdict(branch, False, f"the only copy of the work of a {status} run")


def judge_branches(repo: Repo, states: dict[str, RunState], applied: set[str]) -> list[BranchVerdict]:
    """Every local `plait/...` branch with gc's verdict on it; `applied` are the runs `plait apply` took."""
    listing = repo.git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/plait/")
    verdicts = []
    for line in listing.splitlines():
        branch, _, tip = line.partition(" ")
        run_id = branch.split("/")[1] if branch.count("/") >= 1 else ""
        state = states.get(run_id)
        verdicts.append(_judge(branch, tip, state, run_id in applied))
    return verdicts
