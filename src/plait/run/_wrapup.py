"""The end of an attempt: its work committed on its branch (the commit logged), its worktree handed back to the
run's pool of worktrees (or removed), its checkpoint gone."""

from __future__ import annotations

from plait.agent.loop import AgentResult
from plait.events.runlog import RunLog
from plait.events.types import Committed
from plait.plan_model import PlanTask
from plait.run._opening import pool_of
from plait.workspace import Repo, Worktree
from plait.workspace._pool import give_back

__all__ = ["wrap_up"]


def wrap_up(
    repo: Repo,
    log: RunLog,
    worktree: Worktree,
    task: PlanTask,
    result: AgentResult | None,
    *,
    number: int,
    head: str,
) -> str:
    """Commit the attempt's work, give its worktree back to the run's pool (or remove it) and remove its checkpoint
    ref; returns the commit ('' for none).

    `head` is the integration head: the files a merge of integrated work brought in are not named as the task's.
    Its claims are held until it has finished: a claim waiting for them gets the path once this work is
    integrated, and merges it in before editing.
    """
    commit = _commit(repo, log, worktree, task, result, head)
    if not give_back(worktree, pool_of(repo, log.run_id)):
        worktree.remove()
    repo.git("update-ref", "-d", f"refs/plait/checkpoints/{log.run_id}/{task.id}.{number}", check=False)
    return commit


def _commit(
    repo: Repo,
    log: RunLog,
    worktree: Worktree,
    task: PlanTask,
    result: AgentResult | None,
    head: str,
) -> str:
    summary = result.summary if result else "interrupted before the agent finished"
    message = f"{task.title}\n\n{summary}\n\nplait run {log.run_id}, task {task.id}\n"
    moved = worktree.head()
    # nothing left to commit, but the branch moved (integrated work merged in for a claim): that is the work
    sha = worktree.commit_all(message) or (moved if moved != worktree.base else None)
    if not sha:
        return ""
    # its own files: a merge brought in other tasks' integrated work, which their commits already name; a branch
    # that took in none holds only the task's own work since its base (no git process to find where they part)
    since = worktree.base if moved == worktree.base else repo.git("merge-base", sha, head, check=False).strip()
    files = worktree.changed_files(since or worktree.base)
    log.append(
        Committed(run_id=log.run_id, agent=task.id, sha=sha, branch=worktree.branch, message=task.title, files=files)
    )
    return sha
