"""A run with one agent: pick the base, make a worktree, run the agent, commit its work, clean up."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field

from plait.agent.loop import Agent, AgentLimits, AgentResult
from plait.agent.prompts import system_prompt
from plait.agent.tools import Toolbox
from plait.events.store import EventStore
from plait.events.types import Committed, Decision, RunFinished, RunStarted, TaskFinished, TaskStarted
from plait.models.base import Model, Usage
from plait.models.pricing import PriceTable
from plait.settings import Settings
from plait.workspace import CommandRunner, LocalRunner, Repo, Worktree

__all__ = ["Base", "RunOutcome", "choose_base", "new_run_id", "record_start", "run_single"]

TASK_ID = "main"


@dataclass(frozen=True)
class Base:
    """The commit a run starts from."""

    commit: str
    ref: str
    snapshot: bool = False
    left_out: tuple[str, ...] = ()
    """Uncommitted paths the run does not see (when not snapshotted)."""


@dataclass
class RunOutcome:
    run_id: str
    status: str
    branch: str
    base: Base
    commit: str = ""
    summary: str = ""
    reason: str = ""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    files: list[str] = field(default_factory=list)


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def choose_base(repo: Repo, *, include_uncommitted: bool) -> Base:
    """HEAD, or a snapshot commit of HEAD plus the uncommitted changes; the user's checkout is not touched."""
    dirty = tuple(repo.dirty_paths())
    if dirty and include_uncommitted:
        return Base(repo.snapshot("plait: snapshot of uncommitted changes"), repo.head_ref(), snapshot=True)
    return Base(repo.head(), repo.head_ref(), left_out=dirty)


def _commit_message(task: str, result: AgentResult | None, run_id: str) -> str:
    title = task.strip().splitlines()[0] if task.strip() else "plait task"
    title = title if len(title) <= 68 else title[:65] + "..."
    body = result.summary if result else "interrupted before the agent finished"
    return f"{title}\n\n{body}\n\nplait run {run_id}, task {TASK_ID}\n"


def record_start(
    store: EventStore, run_id: str, repo: Repo, task: str, base: Base, model: str, settings: Settings
) -> None:
    """The first events of a run: what it is asked, from which commit, and what it leaves out."""
    store.append(
        RunStarted(
            run_id=run_id,
            task=task,
            repo=str(repo.root),
            base_commit=base.commit,
            base_ref=base.ref,
            model=model,
            settings=settings.model_dump(mode="json", exclude={"openai_api_key", "anthropic_api_key"}),
            snapshot=base.snapshot,
        )
    )
    if base.left_out:
        store.append(
            Decision(
                run_id=run_id,
                topic="base",
                decision=f"started from {base.ref} without {len(base.left_out)} uncommitted change(s)",
                reason="the run starts from a commit; --include-uncommitted snapshots the changes instead",
                data={"paths": list(base.left_out)},
            )
        )


async def run_single(
    repo: Repo,
    task: str,
    *,
    settings: Settings,
    model: Model,
    store: EventStore,
    base: Base,
    run_id: str | None = None,
    runner: CommandRunner | None = None,
    started: bool = False,
) -> RunOutcome:
    """Run one agent on `task` from `base`; its work ends up committed on `plait/<run>/main`."""
    run_id = run_id or new_run_id()
    branch = f"plait/{run_id}/{TASK_ID}"
    if not started:
        record_start(store, run_id, repo, task, base, model.name, settings)
    worktree = repo.add_worktree(repo.plait_dir() / "worktrees" / run_id / TASK_ID, branch, base.commit)
    store.append(
        TaskStarted(
            run_id=run_id,
            agent=TASK_ID,
            title=task,
            branch=branch,
            worktree=str(worktree.path),
            base_commit=base.commit,
        )
    )
    agent = Agent(
        run_id=run_id,
        agent_id=TASK_ID,
        model=model,
        toolbox=Toolbox(
            worktree.path,
            runner or LocalRunner(),
            command_timeout=settings.command_timeout,
            output_limit=settings.output_limit,
        ),
        store=store,
        prices=PriceTable(settings.prices),
        system=system_prompt(),
        limits=AgentLimits(
            max_steps=settings.max_steps,
            max_tokens=settings.max_tokens,
            max_format_errors=settings.max_format_errors,
            max_output_tokens=settings.max_output_tokens,
        ),
    )
    outcome = RunOutcome(run_id=run_id, status="failed", branch=branch, base=base)
    result: AgentResult | None = None
    try:
        result = await agent.run(task)
    finally:
        outcome.steps, outcome.usage, outcome.cost_usd = agent.steps, agent.usage, agent.cost
        interrupted = result is None
        _finish(store, worktree, outcome, result, task)
        if interrupted:
            outcome.status = "interrupted"
            store.append(RunFinished(run_id=run_id, status="interrupted", reason="stopped by the user", branch=branch))
    return outcome


def _finish(store: EventStore, worktree: Worktree, outcome: RunOutcome, result: AgentResult | None, task: str) -> None:
    """Commit whatever the agent left (even when it failed: nothing is lost), log it, drop the worktree."""
    run_id = outcome.run_id
    sha = worktree.commit_all(_commit_message(task, result, run_id))
    if sha:
        files = worktree.changed_files(outcome.base.commit)
        store.append(
            Committed(
                run_id=run_id, agent=TASK_ID, sha=sha, branch=worktree.branch, message=task.splitlines()[0], files=files
            )
        )
        outcome.commit, outcome.files = sha, files
    worktree.remove()
    if result is None:
        store.append(TaskFinished(run_id=run_id, agent=TASK_ID, status="interrupted", commit=outcome.commit))
        return
    outcome.status = "done" if result.ok else "failed"
    outcome.summary = result.summary
    outcome.reason = "" if result.ok else f"{result.reason}: {result.summary}"
    store.append(
        TaskFinished(
            run_id=run_id,
            agent=TASK_ID,
            status="done" if result.ok else "failed",
            summary=result.summary,
            reason=outcome.reason,
            commit=outcome.commit,
        )
    )
    store.append(
        RunFinished(
            run_id=run_id,
            status="done" if result.ok else "failed",
            reason=outcome.reason,
            branch=worktree.branch,
            commit=outcome.commit,
        )
    )
