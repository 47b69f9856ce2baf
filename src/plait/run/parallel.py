"""A run of several agents: each task of a plan in its own worktree, scheduled, integrated as it finishes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from plait.agent._mcp_json import RunServers
from plait.agent._replay import last_checkpoint
from plait.agent._replaying import ReplayTurns
from plait.agent.budget import Budget, Limits
from plait.agent.loop import AgentResult
from plait.agent.prompts import task_brief
from plait.coord import Board, Leases
from plait.errors import PlaitError
from plait.events.types import RunFinished, TaskFinished
from plait.globs import matches
from plait.models.pricing import PriceTable
from plait.plan_model import Plan, PlanTask
from plait.run._at_work import agent_at_work, close_shell, prepared
from plait.run._brief import ProjectInstructions, interfaces, worker_systems
from plait.run._early import early_work, starts_early
from plait.run._ending import record_end
from plait.run._opening import GitThreads, Opening, log_opening, log_started, make_worktree
from plait.run._placed import placed_attempt
from plait.run._retry import Carried, brief_note, carry_over, last_commit, log_carried, logged_carried
from plait.run._wrapup import wrap_up
from plait.run.backends import AttemptBackend
from plait.run.base import RunBase
from plait.run.context import RunContext, ShellFactory
from plait.run.experts import RunExperts, run_expert_specs
from plait.run.integrate import Integrator, PlannedIntegrator
from plait.run.radar import Radar
from plait.run.scheduler import Attempt, Scheduler, TaskResult, release_slot
from plait.run.state import RunState, charge_earlier_spending
from plait.run.steer import Steering
from plait.workspace import Worktree
from plait.workspace.bootstrap import Bootstrap

TaskStatus = Literal["done", "failed", "interrupted", "dropped"]

__all__ = ["ParallelOutcome", "PlanContext", "TaskAttempts", "run_plan"]


@dataclass
class PlanContext(RunContext):
    """A run of a plan's tasks: where it starts, how its agents' commands run, and what they share."""

    base: RunBase
    runners: ShellFactory
    repo_map: str = ""
    prices: PriceTable = field(default_factory=PriceTable)
    budget: Budget | None = None
    system: str = ""
    """The system prompt; empty for the shared prefix of a parallel run (repository map and plan)."""
    coordinated: bool = True
    """The tasks work side by side: a board for notes, claims on files, experts and the conflict radar."""
    retry_failed: bool = True
    """An attempt whose agent failed is tried again (else only work the gate turned down is)."""
    state: RunState | None = None
    """Where an interrupted run stood, when this is its resumption."""
    verify: str = ""
    """The command the merge gate runs on combined results, told to every agent."""
    brief: Callable[[PlanTask, Attempt | None], str] | None = None
    """What an attempt's agent is told (a retry: why the last one failed); None: the plan's task brief."""
    backend: AttemptBackend | None = None
    """Where attempts run when not in this process (`plait.run.backends`)."""


@dataclass
class ParallelOutcome:
    """How a run of a plan's tasks ended: its status, its integration branch and head, and each task's result."""

    run_id: str
    status: str
    branch: str
    commit: str
    results: dict[str, TaskResult]
    summaries: dict[str, str] = field(default_factory=dict)

    @property
    def dropped(self) -> dict[str, str]:
        """The tasks the run went on without, and why."""
        return {t: r.reason for t, r in self.results.items() if r.status == "dropped"}


class TaskAttempts:
    """The attempts of every task of one run: the scheduler calls it to make each attempt."""

    def __init__(self, ctx: PlanContext, plan: Plan, integrator: Integrator) -> None:
        self.ctx, self.plan, self.integrator = ctx, plan, integrator
        self.tasks = {t.id: t for t in plan.tasks}
        at = ProjectInstructions(ctx.repo.root, ctx.base.commit, ctx.settings.instructions_chars)  # the run's base
        self.systems = {t.id: ctx.system for t in plan.tasks} if ctx.system else worker_systems(plan, at.root, None, at)
        s = ctx.settings
        self.bootstrap = Bootstrap(ctx.repo.root, tuple(s.worktree_include), s.setup_command)
        self.budgets = {
            t.id: ctx.budget.child(t.id, Limits(tokens=s.task_max_tokens, usd=s.task_max_usd))
            for t in plan.tasks
            if ctx.budget is not None
        }
        self.experts = RunExperts(
            run_expert_specs(s, plan, ctx.log) if ctx.coordinated else [],
            repo=ctx.repo,
            log=ctx.log,
            model=ctx.model,
            prices=ctx.prices,
            commit=ctx.base.commit,
            budget=ctx.budget,
            repo_map=ctx.repo_map,
            settings=s,
            backend=ctx.backend,
        )
        if ctx.state is not None and ctx.budget is not None:
            # the run's own total was charged by its caller
            charge_earlier_spending(ctx.budget, ctx.log, {**self.budgets, **self.experts.budgets})
        self.turns = ReplayTurns()
        """The resumed agents replay their past one at a time, each then making its first new call at once."""
        self.slots = {t.id: i for i, t in enumerate(plan.tasks)}
        self.git = GitThreads(s.concurrency)
        self.dependents = {t.id: [d.id for d in plan.tasks if t.id in d.depends_on] for t in plan.tasks}
        if isinstance(integrator, PlannedIntegrator):
            integrator.planned(plan)
        self.summaries: dict[str, str] = {}
        self.mcp_servers: asyncio.Future[RunServers] | None = None
        """The run's MCP servers, looked up at its first attempt: none at all lets attempts start early."""
        self.steering = {t.id: Steering(ctx.log, t.id) for t in plan.tasks}
        self.board = None if not ctx.coordinated else Board.from_log(ctx.log, plan)
        use_leases = ctx.settings.leases and ctx.coordinated
        self.leases = (
            Leases.from_log(
                ctx.log,
                plan,
                timeout=s.task_wall_time or 24 * 3600.0,  # a claim lasts as long as its attempt may
                wait=s.lease_wait,
                shared=[*s.shared_files, *plan.shared],  # each task adds its own lines: the merge keeps them all
                tracked=True,
            )
            if use_leases
            else None
        )

    def scheduled(self, task_id: str, state: str, why: str) -> None:
        """The scheduler's word on a task: an attempt starts (its write-set is held from now on) or ended."""
        if self.leases is None:
            return
        if state == "running":
            self.leases.start(task_id)
        else:  # also after an attempt that crashed before it could say it finished
            self.leases.release_all(task_id)

    async def __call__(self, task_id: str, number: int, last: Attempt | None) -> Attempt:
        ctx, task, key = self.ctx, self.tasks[task_id], (task_id, number)
        state = ctx.state
        branch = f"plait/{ctx.log.run_id}/{task_id}" + (f".{number}" if number > 1 else "")
        path = ctx.repo.plait_dir() / "worktrees" / ctx.log.run_id / (task_id if number == 1 else f"{task_id}.{number}")
        if state is not None and key in state.agent_done and key in state.commits:
            # the agent finished and its work was committed before the process died: integrate it
            self.summaries[task_id] = state.agent_done[key]
            if ctx.backend is not None:  # made on another node: fetched from the shared store if need be
                ctx.backend.fetch(ctx.log.run_id, state.commits[key])
            return await self.integrate(task, branch, state.commits[key], state.agent_done[key])
        if ctx.backend is not None:  # the attempt runs where the backend places it; its commit comes back here
            return await placed_attempt(self, ctx.backend, task, number, last, branch)
        opening = state.openings.get(key) if state is not None else None
        last = opening.last if opening is not None else last  # the failure the brief tells of, as the log has it
        resumed = state is not None and key in state.bases
        if state is not None and key in state.bases:
            opened: Opening | None = None
            base = state.bases[key]
        else:
            if opening is None:  # logged before the worktree is made: a resumed process makes the same one
                # a retry (after a failure or an ejection) starts on the integration head, where it must fit, with
                # the last attempt's work brought onto it
                base = self.integrator.head if task.depends_on or number > 1 else ctx.base.commit
                opening = Opening(number, branch, str(path), base, *((last.reason, last.detail) if last else ("", "")))
                if await starts_early(self, task, number):  # logs the opening with the start
                    return await self._ended(task, branch, *await early_work(self, task, opening))
                await self.git.run(log_opening, ctx.log, task_id, opening)  # off the event loop, as the git work
            base, opened = opening.base, opening
        fresh = state is None
        making = self.git.run if fresh else self.git.opening  # a resumed run opens every attempt at once
        layered = ctx.settings.layered_worktrees
        worktree = await making(
            make_worktree, ctx.repo, path, branch, base, fresh=fresh, run_id=ctx.log.run_id, layered=layered
        )
        if opened is not None:
            await self.git.run(log_started, ctx.log, task_id, task.title, opened)
        carried: Carried | None = None
        # looked up once the worktree is made: the first agent to replay waits for no other agent's past to be read
        saved = last_checkpoint(ctx.log, task_id, number) if resumed else ""
        if saved:
            await self.git.opening(worktree.restore, saved)
            carried = logged_carried(ctx.log, task_id, number)
        elif number > 1:
            carried = await self._carry(worktree, task_id, number)
        result: AgentResult | None = None
        failure = ""
        try:
            result = await self._work(task, worktree, number, last, carried)
        except PlaitError as exc:
            failure = str(exc)
        finally:
            # shielded: a cancelled attempt still commits what its agent left, so nothing is lost
            commit = await asyncio.shield(self.git.run(self.wrap_up, worktree, task, result, number))
            if result is None and not failure:
                await self.finished(task_id, "interrupted", "stopped before the agent finished", commit)
        return await self._ended(task, branch, result, failure, commit)

    async def _ended(
        self, task: PlanTask, branch: str, result: AgentResult | None, failure: str, commit: str
    ) -> Attempt:
        """How the attempt ended, logged; its commit integrated when its agent finished."""
        task_id, ctx = task.id, self.ctx
        if result is None:
            await self.finished(task_id, "failed", failure, commit)
            return Attempt(False, failure, retry=ctx.retry_failed)
        if not result.ok:
            await self.finished(task_id, "failed", f"{result.reason}: {result.summary}", commit)
            retry = result.reason not in ("budget", "interrupted", "stopped_by_user") and ctx.retry_failed
            retry = retry or self.steering[task_id].retry  # the user who stopped it said whether to try again
            return Attempt(False, f"the agent stopped ({result.reason}): {result.summary}", retry=retry)
        self.summaries[task_id] = result.summary
        return await self.integrate(task, branch, commit, result.summary)

    async def _carry(self, worktree: Worktree, task_id: str, number: int) -> Carried:
        """Bring the last attempt's work into the new attempt's worktree, and log what it was given."""
        ctx = self.ctx
        previous = last_commit(ctx.log, task_id)
        carried = await self.git.run(
            carry_over, ctx.repo, worktree, previous, number - 1, task_id=task_id, leases=self.leases
        )
        log_carried(ctx.log, task_id, number, carried)
        return carried

    async def _work(
        self, task: PlanTask, worktree: Worktree, number: int, last: Attempt | None, carried: Carried | None
    ) -> AgentResult:
        """Bootstrap the worktree and run the agent in it; the attempt's shell is closed when it ends (a sandboxed
        one removes its cgroups and private tmp then, not whenever it is collected)."""
        runner = await prepared(self, task, worktree)
        try:
            return await agent_at_work(self, task, worktree, runner, number, last, carried)
        finally:
            close_shell(runner)

    def brief_for(self, task: PlanTask, last: Attempt | None, carried: Carried | None) -> str:
        """What the attempt's agent is told: the plan's brief, and for a retry what became of the last attempt."""
        why, detail = (last.reason, last.detail) if last else ("", "")
        retry = brief_note(carried, why, detail) if carried is not None else ""
        if self.ctx.brief is not None:
            return self.ctx.brief(task, replace(last, detail=retry) if last and retry else last)
        return task_brief(
            task.id,
            task.title,
            task.instructions,
            task.writes,
            why,
            detail,
            interfaces=interfaces(self.plan, task),
            starts_from=task.depends_on,
            verify=self.ctx.verify,
            experts=self.experts.experts.roster(),
            built_on_by=self.dependents[task.id],
            owed=self.integrator.owed(task.id) if isinstance(self.integrator, PlannedIntegrator) else [],
            shared=[p for p in self.plan.shared if matches(task.writes, p) or p in task.writes],
            retry=retry,
        )

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> Attempt:
        """Bring the attempt's commit into the run's result (unless integrated before it was resumed, or stopped by
        the user before it was committed: see `plait.run.steer`), then log it."""
        integrated, steering = task.id in (self.ctx.state.integrated if self.ctx.state else ()), self.steering[task.id]
        if not integrated and (stopped := steering.stopped_before(commit)) is not None:
            await self.finished(task.id, "failed", f"stopped_by_user: {stopped}", commit)
            return Attempt(False, f"the agent stopped (stopped_by_user): {stopped}", retry=steering.retry)
        if commit and not integrated:
            release_slot()  # the agent is done: merging is not agent work, and may wait for other merges
            ok, why = await self.integrator.integrate(task, branch, commit, summary)
            if not ok:
                first = why.splitlines()[0] if why else ""
                await self.finished(task.id, "failed", f"not integrated: {first}", commit)
                return Attempt(False, f"its branch was not integrated: {first}", detail=why)
        await self.finished(task.id, "done", summary, commit)
        return Attempt(True)

    def wrap_up(self, worktree: Worktree, task: PlanTask, result: AgentResult | None, number: int) -> str:
        """The attempt's end in git (see `_wrapup`): its commit ('' for none)."""
        ctx = self.ctx
        return wrap_up(ctx.repo, ctx.log, worktree, task, result, number=number, head=self.integrator.head)

    async def finished(self, task_id: str, status: TaskStatus, reason: str, commit: str) -> None:
        """Log how the attempt ended (off the event loop), then free its claims: the claims waiting for them see its
        work integrated."""
        await self.ctx.log.append_async(
            TaskFinished(
                run_id=self.ctx.log.run_id,
                agent=task_id,
                status=status,
                summary=self.summaries.get(task_id, ""),
                reason="" if status == "done" else reason,
                commit=commit,
            )
        )
        if self.leases is not None:
            self.leases.release_all(task_id)


async def run_plan(ctx: PlanContext, plan: Plan, integrator: Integrator) -> ParallelOutcome:
    """Run every task of `plan`, integrating each as it finishes; tasks that keep failing are dropped."""
    runner = TaskAttempts(ctx, plan, integrator)
    radar = Radar(ctx.repo, ctx.log, plan, lambda: integrator.head) if ctx.coordinated else None
    s = ctx.settings
    scheduler = Scheduler(
        {t.id: t.depends_on for t in plan.tasks},
        runner,
        concurrency=s.concurrency,
        max_attempts=s.max_attempts,
        wall_s=s.task_wall_time,
        on_state=runner.scheduled,
        settled=ctx.state.settled() if ctx.state else None,
        resume=ctx.state.resume_points(s.max_attempts) if ctx.state else None,
    )
    watching = asyncio.ensure_future(radar.watch(s.radar_interval)) if radar and s.radar_interval else None
    try:
        await runner.experts.open()
        results = await scheduler.run()
    except asyncio.CancelledError:
        branch, head = integrator.branch, integrator.head
        stop = RunFinished(
            run_id=ctx.log.run_id, status="interrupted", reason="stopped by the user", branch=branch, commit=head
        )
        ctx.log.append(stop)
        raise
    finally:
        if watching is not None:
            watching.cancel()
        await runner.experts.close()
        runner.git.close()
    status = record_end(ctx.log, results, integrator, ctx.state.dropped if ctx.state else {})
    return ParallelOutcome(ctx.log.run_id, status, integrator.branch, integrator.head, results, runner.summaries)
