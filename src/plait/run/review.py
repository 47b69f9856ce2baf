"""A run's task branches integrated again, some left out: `plait review --drop` and `plait apply --pick`.

What a left-out task carries with it: a task the plan builds on it (`depends_on`), or whose branch holds its
commit (it merged the task's integrated work in for a claim), would bring its work back, so it goes too.
The new result goes on a branch of its own, `plait/<run>/integration-<n>`, through the merge queue and the
gate like the first; its events go into the run's log, ending with a `RunFinished` that names it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from plait.errors import MissingApiKey
from plait.events.runlog import RunLog
from plait.events.types import Decision, RunFinished
from plait.reconcile.gate import Gate
from plait.reconcile.ladder import default_resolvers
from plait.reconcile.queue import MergeQueue, QueueReport, TaskBranch, integration_branch
from plait.reconcile.types import Resolver
from plait.run.preflight import preflight
from plait.settings import Settings
from plait.workspace import Repo, Shell

__all__ = [
    "Reintegrated",
    "make_gate",
    "needed_by",
    "next_branch",
    "reintegrate",
    "resolvers_for",
    "taken_along",
    "through_the_gate",
]


def resolvers_for(settings: Settings, no_llm: bool, log: RunLog, warn: Callable[[str], None]) -> list[Resolver]:
    """The merge ladder's rungs; the LLM rung too unless `no_llm` or its key is missing (then `warn` says so)."""
    resolvers = default_resolvers(defer_low=settings.low_confidence_to_llm)
    if no_llm:
        return resolvers
    from plait.models.registry import make_model  # the model's modules only when the LLM rung is on
    from plait.reconcile.llm_resolver import LLMResolver

    try:
        model = make_model(settings.model, settings)
    except MissingApiKey as exc:
        warn(f"the LLM rung is off ({exc}); pass --no-llm to do without it")
        return resolvers
    return [*resolvers, LLMResolver(model, log)]


def make_gate(repo: Repo, log: RunLog, base: str, settings: Settings) -> Gate:
    """The gate of an integration: the verify command runs confined like an agent's command, never asking."""

    def gate_runner(worktree: Path) -> Shell:
        from plait.workspace.sandbox import sandboxed_shell  # the sandbox only when a verify command runs

        return sandboxed_shell(
            settings,
            worktree=worktree,
            common_dir=repo.common_dir,
            log=log,
            agent="gate",
            interactive=False,
        )

    return Gate(
        repo,
        base=base,
        log=log,
        verify_command=settings.verify_command,
        runner_for=gate_runner,
    )


def next_branch(repo: Repo, run_id: str) -> str:
    """The first free `plait/<run>/integration-<n>` (n from 2): a new result never moves the earlier one."""
    n = 2
    while repo.branch_exists(f"{integration_branch(run_id)}-{n}"):
        n += 1
    return f"{integration_branch(run_id)}-{n}"


def taken_along(repo: Repo, tasks: Sequence[TaskBranch], dropped: Sequence[str]) -> dict[str, str]:
    """Every task that goes when `dropped` go, with why: asked for, or what it depends on (plan or branch)."""
    why = {t: "asked for" for t in dropped}
    changed = True
    while changed:
        changed = False
        for task in tasks:
            if task.task_id in why:
                continue
            reason = _leans_on(repo, task, [t for t in tasks if t.task_id in why])
            if reason:
                why[task.task_id], changed = reason, True
    return why


def needed_by(repo: Repo, tasks: Sequence[TaskBranch], picked: Sequence[str]) -> dict[str, str]:
    """Every task the `picked` ones need, with why: asked for, or which picked task depends on it."""
    why = {t: "asked for" for t in picked}
    changed = True
    while changed:
        changed = False
        for task in [t for t in tasks if t.task_id in why]:
            for other in tasks:
                if other.task_id not in why and _leans_on(repo, task, [other]):
                    why[other.task_id], changed = f"{task.task_id} {_leans_on(repo, task, [other])}", True
    return why


def _leans_on(repo: Repo, task: TaskBranch, others: Sequence[TaskBranch]) -> str:
    for other in others:
        if other.task_id in task.depends_on:
            return f"depends on {other.task_id} (plan)"
        if other.commit and task.commit and other.commit != task.commit and repo.is_ancestor(other.commit, task.commit):
            return f"holds {other.task_id}'s work (merged into its branch)"
    return ""


@dataclass(frozen=True)
class Reintegrated:
    """The result of integrating again: its branch and head, and the queue's report."""

    branch: str
    report: QueueReport
    dropped: Mapping[str, str]


def through_the_gate(
    queue: MergeQueue, gate: Gate, tasks: Sequence[TaskBranch], warn: Callable[[str], None]
) -> QueueReport:
    """Check the verify command once (`warn` is told when it fails at the base), then merge each of `tasks` through
    `queue` and its gate; the gate's worktree is removed at the end.

    Raises:
        ConfigError: The verify command cannot run here.
    """

    async def work() -> QueueReport:
        checked = await preflight(gate, queue.log, work="the branches")
        if checked.state == "fails":
            warn(checked.line)
        for task in tasks:
            await queue.submit(task)
        return await queue.drain()

    try:
        return asyncio.run(work())
    finally:
        gate.close()


def reintegrate(
    repo: Repo,
    log: RunLog,
    base: str,
    tasks: Sequence[TaskBranch],
    *,
    dropped: Mapping[str, str],
    settings: Settings,
    resolvers: Sequence[Resolver],
    warn: Callable[[str], None],
) -> Reintegrated:
    """Integrate `tasks` onto `base` again, on a new branch of the run, through the queue and the gate.

    `dropped` (task -> why) is what is left out; it is logged with the result.
    """
    branch = next_branch(repo, log.run_id)
    left_out = ", ".join(f"{t} ({why})" for t, why in dropped.items()) or "nothing"
    log.append(
        Decision(
            run_id=log.run_id,
            topic="review",
            decision=f"integrate {', '.join(t.task_id for t in tasks) or 'nothing'} again on {branch}",
            reason=f"left out: {left_out}",
            data={"branch": branch, "kept": [t.task_id for t in tasks], "dropped": dict(dropped)},
        )
    )
    gate = make_gate(repo, log, base, settings)
    queue = MergeQueue(repo, log, base, gate=gate, resolvers=resolvers, branch=branch)
    report = through_the_gate(queue, gate, tasks, warn)
    status = "done" if not report.ejected else "failed"
    reason = f"integrated again without {', '.join(dropped)}" if dropped else "integrated again"
    if report.ejected:
        reason += f"; {len(report.ejected)} of {len(tasks)} branch(es) ejected"
    log.append(RunFinished(run_id=log.run_id, status=status, reason=reason, branch=branch, commit=queue.head))
    return Reintegrated(branch, report, dict(dropped))
