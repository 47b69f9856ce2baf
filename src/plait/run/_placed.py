"""An attempt the backend places elsewhere (`--backend ray`): the driver logs its start, sends it, fetches its result.

    decision `worktree` (intended) ──► `task_started` ──► backend: worker clones, works, commits ──► result
    commit fetched into the user's repository ──► integrated like a local attempt's

A retry keeps the last attempt's work as a local one does: git's merge of the integration head and that work is
made here, as a commit the worker checks out as uncommitted changes (no claims: a remote attempt holds none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.plan_model import PlanTask
from plait.run._opening import Opening, log_opening, log_started
from plait.run._retry import Carried, last_commit, log_carried, logged_carried, merged_onto
from plait.run.backends import AttemptBackend
from plait.run.backends._remote import RemoteJob
from plait.run.scheduler import Attempt
from plait.workspace import PLAIT_IDENTITY, GitError, Repo
from plait.workspace.bootstrap import port_env
from plait.workspace.scope import store_scope

if TYPE_CHECKING:
    from plait.run.parallel import TaskAttempts

__all__ = ["carry_commit", "placed_attempt"]

_SECRETS = {"openai_api_key", "anthropic_api_key"}


async def placed_attempt(
    runner: TaskAttempts, backend: AttemptBackend, task: PlanTask, number: int, last: Attempt | None, branch: str
) -> Attempt:
    """Attempt `number` of `task` on the backend; integrated when its agent finished."""
    ctx, state, key = runner.ctx, runner.ctx.state, (task.id, number)
    opening = state.openings.get(key) if state is not None else None
    last = opening.last if opening is not None else last
    if opening is None:
        base = runner.integrator.head if task.depends_on or number > 1 else ctx.base.commit
        where = f"placed by the {ctx.settings.backend} backend"
        opening = Opening(number, branch, where, base, *((last.reason, last.detail) if last else ("", "")))
        log_opening(ctx.log, task.id, opening)
    if state is None or key not in state.bases:
        log_started(ctx.log, task.id, task.title, opening)
    carried, carry = None, ""
    if number > 1:
        previous = last_commit(ctx.log, task.id)
        if previous:
            backend.fetch(ctx.log.run_id, previous)
        carried, carry = carry_commit(ctx.repo, opening.base, previous, number - 1)
        logged = logged_carried(ctx.log, task.id, number) if state is not None else None
        if logged is None:
            log_carried(ctx.log, task.id, number, carried)
        else:
            carried = logged
    s = ctx.settings
    job = RemoteJob(
        run_id=ctx.log.run_id,
        task=task.model_dump(mode="json"),
        attempt=number,
        branch=branch,
        base=opening.base,
        carry=carry,
        brief=runner.brief_for(task, last, carried),
        system=runner.systems[task.id],
        model=s.model,
        settings=s.model_dump(mode="json", exclude=_SECRETS),
        store=s.store,
        scope=store_scope(ctx.repo),
        env=port_env(runner.slots[task.id], s.port_block),
        plan=runner.plan.model_dump(mode="json") if runner.board is not None else None,
        experts=[spec.model_dump(mode="json") for spec, _ in runner.experts.specs]
        if len(runner.experts.experts)
        else [],
    )
    outcome = await backend.attempt(job)
    if outcome.commit:
        ctx.repo.git("update-ref", f"refs/heads/{branch}", outcome.commit)
    if outcome.failure:
        await runner.finished(task.id, "failed", outcome.failure, outcome.commit)
        return Attempt(False, outcome.failure, retry=True)
    if not outcome.ok:
        await runner.finished(task.id, "failed", f"{outcome.reason}: {outcome.summary}", outcome.commit)
        retry = outcome.reason not in ("budget", "interrupted", "stopped_by_user")
        retry = retry or runner.steering[task.id].retry
        return Attempt(False, f"the agent stopped ({outcome.reason}): {outcome.summary}", retry=retry)
    runner.summaries[task.id] = outcome.summary
    return await runner.integrate(task, branch, outcome.commit, outcome.summary)


def carry_commit(repo: Repo, head: str, previous: str, number: int) -> tuple[Carried, str]:
    """Attempt `number`'s work (`previous`) merged onto `head`, as a commit; '' when there is nothing to carry."""
    if not previous or repo.is_ancestor(previous, head):
        return Carried(number, previous, head), ""
    try:
        tree, conflicts, files = merged_onto(repo, head, previous)
        message = f"plait: attempt {number}'s work on {head[:10]}"
        sha = repo.git("commit-tree", tree, "-p", head, "-m", message, env=PLAIT_IDENTITY).strip()
    except GitError as exc:
        return Carried(number, previous, head, lost=exc.detail), ""
    return Carried(number, previous, head, files, tuple(conflicts)), sha
