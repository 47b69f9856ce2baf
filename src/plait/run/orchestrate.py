"""`plait run` from start to end: check the verify command at the base, plan (or read a plan), resolve overlaps,
then one agent or many, each result through the gate."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from plait.agent.budget import Budget, Limits
from plait.agent.context import context_budget
from plait.agent.instructions import ProjectInstructions
from plait.errors import PlaitError
from plait.events.runlog import RunLog
from plait.events.types import Decision, NotePosted, PlanMade, RunFinished
from plait.models.pricing import PriceTable
from plait.plan.repomap import repo_map, tracked_files
from plait.plan_model import PLANNING_FAILED, Plan
from plait.reconcile.gate import Gate
from plait.run._nested import noticing
from plait.run.backends import AttemptBackend, open_backend
from plait.run.base import RunBase, record_start
from plait.run.context import RunContext, ShellFactory
from plait.run.integrate import QueueIntegrator
from plait.run.maintenance import tidy_run
from plait.run.one_agent import RunOutcome, as_one_task, one_task_plan, run_one_agent
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.run.preflight import preflight
from plait.run.state import RunState, charge_earlier_spending
from plait.workspace import CommandResult

if TYPE_CHECKING:
    from plait.plan.overlap import OverlapDecision
    from plait.plan.triage import Triage
    from plait.reconcile.queue import MergeQueue
    from plait.reconcile.types import Resolver

__all__ = ["Orchestration", "Review", "orchestrate"]

Review = Callable[[Plan, list["OverlapDecision"]], bool]
"""Shown the plan before anything more is spent; False stops the run."""


class _NoCommands:
    """The planner's runner: its tools only read, and were one ever to run a command, it would be refused."""

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        return CommandResult(exit_code=126, output="plait did not run this command: the planner runs no commands")


@dataclass
class Orchestration(RunContext):
    """The change to make: what, from which commit, and how agents' commands run."""

    task: str
    base: RunBase
    runners: ShellFactory
    plan_file: Path | None = None
    one_agent: bool = False
    """One agent on the task as given, no planner (`--single`)."""
    use_llm_resolver: bool = True
    review: Review | None = None
    state: RunState | None = None
    """Where an interrupted run stood, when this continues it."""
    backend: AttemptBackend | None = None
    """Where the parallel run's attempts run, opened by `orchestrate` (None: in this process)."""


async def orchestrate(o: Orchestration) -> RunOutcome | ParallelOutcome | None:
    """Run the task, or continue it from `o.state`; None when the user declined the plan at review.

    Raises `ConfigError` before anything is spent when the verify command cannot run in the sandbox, and the
    planner's error (`PlanError`, `ModelError`) once the run is logged as ended in planning failure.
    """
    if o.state is None:
        record_start(o.log, o.repo, o.task, o.base, o.model.name, o.settings)
    gate = Gate(
        o.repo,
        base=o.base.commit,
        log=o.log,
        verify_command=o.settings.verify_command,
        runner_for=lambda path: o.runners(path, "gate", {}),
    )
    try:
        await preflight(gate, o.log)
        if not o.one_agent:
            o.backend = open_backend(o.settings, o.repo, o.log.store, o.base.commit)
        return await _run(o, gate)
    finally:
        gate.close()
        if o.backend is not None:
            o.backend.close()
        if _ended(o.log):  # a resumed run also takes away what its killed process left
            tidy_run(o.repo, o.log.run_id)


def _ended(log: RunLog) -> bool:
    """Whether the run has ended for good: not running, not stopped by the user."""
    finished = log.events(kinds=["run_finished"])
    return bool(finished) and isinstance(finished[-1], RunFinished) and finished[-1].status != "interrupted"


async def _run(o: Orchestration, gate: Gate) -> RunOutcome | ParallelOutcome | None:
    s, state = o.settings, o.state
    prices = PriceTable(s.prices)
    if o.one_agent or (state is not None and state.one_agent):
        return await _one_agent(o, gate)
    limits = Limits(tokens=s.run_max_tokens, usd=s.run_max_usd, wall_s=s.run_wall_time)
    budget = Budget("run", limits, o.log)
    if state is not None:
        charge_earlier_spending(budget, o.log)
    files = tracked_files(o.repo.root)
    if state is not None and state.plan is not None:
        return await _parallel(o, state.plan, repo_map(o.repo.root, files=files), budget, prices, gate)
    shared_map = ""
    try:
        verify = gate.command_for(o.base.commit) or ""
        chosen = await _triage(o, files, budget, prices)
        if chosen is not None and chosen.mode == "single":
            plan = one_task_plan(o.task, chosen.reason)
        else:
            shared_map = repo_map(o.repo.root, files=files)
            plan = await _plan(o, shared_map, budget, prices, verify)
    except asyncio.CancelledError:  # stopped by the user: resumable, so `plait resume` plans again
        o.log.append(
            RunFinished(run_id=o.log.run_id, status="interrupted", reason="stopped by the user while planning")
        )
        raise
    except PlaitError as exc:  # no plan (the model failed, plans rejected, the budget spent): the run ends here
        o.log.append(RunFinished(run_id=o.log.run_id, status="failed", reason=f"{PLANNING_FAILED}: {exc}"))
        raise
    from plait.plan.overlap import resolve_overlaps  # planning's own: a resumed run has its plan

    plan, decisions = resolve_overlaps(plan, files)
    for d in decisions:
        o.log.append(d.event(o.log.run_id))
    if o.review is not None and not o.review(plan, decisions):
        o.log.append(Decision(run_id=o.log.run_id, topic="review", decision="the user declined the plan"))
        o.log.append(RunFinished(run_id=o.log.run_id, status="failed", reason="the plan was declined at review"))
        return None
    if plan.mode == "single" or len(plan.tasks) == 1:
        o.log.append(
            Decision(run_id=o.log.run_id, topic="mode", decision="one agent, no parallel overhead", reason=plan.reason)
        )
        return await _one_agent(o, gate, plan)
    source = "file" if o.plan_file is not None else "planner"
    o.log.append(PlanMade(run_id=o.log.run_id, agent="planner", plan=plan, source=source))
    _post_decisions(o.log, plan, decisions)
    return await _parallel(o, plan, shared_map, budget, prices, gate)


def _post_decisions(log: RunLog, plan: Plan, decisions: list[OverlapDecision]) -> None:
    """Tell the tasks an overlap decision changed, on the board, so they read it at their first turn."""
    ids = {t.id for t in plan.tasks}
    for d in decisions:
        to = [t for t in d.tasks if t in ids]
        if not to:
            continue
        files = f" Files: {', '.join(d.files[:8])}." if d.files else ""
        text = f"plait changed the planner's plan: {d.what}, because {d.why}.{files}"
        log.append(NotePosted(run_id=log.run_id, agent="planner", topic="plan", text=text, paths=list(d.files), to=to))


async def _triage(o: Orchestration, files: list[str], budget: Budget, prices: PriceTable) -> Triage | None:
    """One short call that says whether the task is one agent's before the planner is paid for; None when the
    plan is given (`--plan`) or the planner's split is asked for whatever it costs (`--split always`)."""
    if o.plan_file is not None or o.settings.split != "auto":
        return None
    from plait.plan.triage import TRIAGE_ID, triage

    return await triage(
        o.task,
        files=files,
        model=o.model,
        log=o.log,
        prices=prices,
        budget=budget.child(TRIAGE_ID, Limits()),
    )


async def _plan(o: Orchestration, shared_map: str, budget: Budget, prices: PriceTable, verify: str) -> Plan:
    from plait.plan.load import load_plan
    from plait.plan.planner import make_plan

    if o.plan_file is not None:
        return load_plan(o.plan_file, o.settings.max_tasks)
    return await make_plan(
        o.task,
        repo_root=o.repo.root,
        model=o.model,
        log=o.log,
        prices=prices,
        runner=_NoCommands(),
        repo_map=shared_map,
        budget=budget.child("planner", Limits()),
        context=context_budget(o.model.name, o.settings.context_tokens),
        verify=verify,
        split=o.settings.split,
        max_tasks=o.settings.max_tasks,
        instructions=ProjectInstructions(o.repo.root, o.base.commit, o.settings.instructions_chars),
    )


async def _parallel(
    o: Orchestration, plan: Plan, shared_map: str, budget: Budget, prices: PriceTable, gate: Gate
) -> ParallelOutcome:
    s = o.settings

    def merge_queue() -> MergeQueue:  # made at the first merge: a resumed run's agents replay without it
        from plait.reconcile.ladder import default_resolvers
        from plait.reconcile.llm_resolver import LLMResolver
        from plait.reconcile.queue import MergeQueue

        resolvers: list[Resolver] = default_resolvers()
        if o.use_llm_resolver:
            resolvers.append(LLMResolver(o.model, o.log, prices=prices))
        return MergeQueue(o.repo, o.log, o.base.commit, gate=gate, resolvers=resolvers)

    ctx = PlanContext(
        repo=o.repo,
        settings=s,
        model=o.model,
        log=o.log,
        base=o.base,
        runners=noticing(o.runners, o.repo),
        repo_map=shared_map,
        prices=prices,
        budget=budget,
        state=o.state,
        verify=gate.command_for(o.base.commit) or "",
        backend=o.backend,
    )
    return await run_plan(ctx, plan, QueueIntegrator(o.log, merge_queue))


async def _one_agent(o: Orchestration, gate: Gate, planned: Plan | None = None) -> RunOutcome:
    if o.state is None or o.state.plan is None:
        plan = one_task_plan(o.task) if planned is None else as_one_task(o.task, planned)
        o.log.append(PlanMade(run_id=o.log.run_id, plan=plan, source="single"))
    else:
        plan = o.state.plan
    return await run_one_agent(
        o.repo,
        o.task,
        settings=o.settings,
        model=o.model,
        log=o.log,
        base=o.base,
        runners=noticing(o.runners, o.repo),
        started=True,
        state=o.state,
        gate=gate,
        plan=plan,
    )
