"""A run of one agent: the user's task as given, in one worktree, its result on `plait/<run>/main` once the gate
passed it (when the run has a gate: a failing gate sends the failure back to the agent, up to `max_attempts`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from plait.agent.budget import Budget, Limits
from plait.agent.instructions import ProjectInstructions
from plait.agent.prompts import system_prompt, task_brief
from plait.events.runlog import RunLog
from plait.events.types import AgentStopped, Committed
from plait.messages import Model, Usage
from plait.models.pricing import PriceTable
from plait.plan_model import Plan, PlanTask
from plait.reconcile.gate import Gate
from plait.run._gated import GatedIntegrator
from plait.run.base import RunBase, record_start
from plait.run.context import ShellFactory
from plait.run.integrate import DirectIntegrator, Integrator
from plait.run.parallel import PlanContext, run_plan
from plait.run.scheduler import Attempt
from plait.run.state import RunState, charge_earlier_spending
from plait.settings import Settings
from plait.workspace import LocalShell, Repo, Shell

__all__ = ["TASK_ID", "RunOutcome", "as_one_task", "one_agent_brief", "one_task_plan", "run_one_agent"]

TASK_ID = "main"


@dataclass
class RunOutcome:
    """How a one-agent run ended: its status and branch, the agent's commit, summary and files, what it spent."""

    run_id: str
    status: str
    branch: str
    base: RunBase
    commit: str = ""
    summary: str = ""
    reason: str = ""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    files: list[str] = field(default_factory=list)


def one_task_plan(task: str, reason: str = "one agent was asked for") -> Plan:
    """The plan of one task, the user's task as given (its first line the title)."""
    title = task.strip().splitlines()[0] if task.strip() else "plait task"
    title = title if len(title) <= 68 else title[:65] + "..."
    return Plan(mode="single", reason=reason, tasks=[PlanTask(id=TASK_ID, title=title, instructions=task)])


def _notes(instructions: str) -> bool:
    """Whether a planner's instructions say anything: not empty, not "as given" (the task says it all)."""
    return instructions.strip().rstrip(".").strip().lower() not in ("", "as given", "as given in the task")


def as_one_task(task: str, plan: Plan) -> Plan:
    """The one-task plan a planner's plan becomes when it runs as one agent: the task as given, then the
    planner's instructions for each part (which name the files and functions it found), so none is lost."""
    parts = [t for t in plan.tasks if _notes(t.instructions) and t.instructions.strip() != task.strip()]
    if not parts:
        return one_task_plan(task, plan.reason or "one agent")
    notes = "\n\n".join(
        f"{t.title}: {t.instructions.strip()}" if len(parts) > 1 else t.instructions.strip() for t in parts
    )
    whole = one_task_plan(f"{task.strip()}\n\nThe planner's notes on how to do it:\n\n{notes}", plan.reason)
    first = whole.tasks[0].model_copy(update={"title": one_task_plan(task).tasks[0].title})
    return whole.model_copy(update={"tasks": [first]})


def one_agent_brief(verify: str) -> Callable[[PlanTask, Attempt | None], str]:
    """The agent's first message: the task as given, with the command its result must pass and, on a retry, why
    the last attempt was turned down."""

    def brief(task: PlanTask, last: Attempt | None) -> str:
        if last is None and not verify:
            return task.instructions
        why, detail = (last.reason, last.detail) if last else ("", "")
        return task_brief("", task.title, task.instructions, [], why, detail, verify=verify)  # its id says nothing

    return brief


async def run_one_agent(
    repo: Repo,
    task: str,
    *,
    settings: Settings,
    model: Model,
    log: RunLog,
    base: RunBase,
    runner: Shell | None = None,
    runners: ShellFactory | None = None,
    started: bool = False,
    state: RunState | None = None,
    gate: Gate | None = None,
    plan: Plan | None = None,
) -> RunOutcome:
    """Run one agent on `task` from `base`; its work ends up committed on `plait/<run>/main`.

    With a `gate` (the caller's to close), that branch moves only to a commit the gate passed. `plan` is the
    one-task plan to run (as logged), when it says more than the task as given (a planner's notes). It runs as a plan
    of that one task (`run_plan`), without what tasks side by side share (board, claims, experts, radar) and without
    trying a failed agent again: only work the gate turned down goes back to it.
    """
    if not started:
        record_start(log, repo, task, base, model.name, settings)
    s = settings
    budget = Budget("run", Limits(tokens=s.run_max_tokens, usd=s.run_max_usd, wall_s=s.run_wall_time), log)
    if state is not None:
        charge_earlier_spending(budget, log)
    branch = f"plait/{log.run_id}/{TASK_ID}"
    integrator: Integrator = DirectIntegrator(base.commit, branch)
    verify = ""
    if gate is not None:
        integrator = GatedIntegrator(gate, log, branch)
        command = await asyncio.to_thread(gate.command_for, base.commit)
        verify = command or ""
    instructions = ProjectInstructions(repo.root, base.commit, s.instructions_chars)
    ctx = PlanContext(
        repo=repo,
        settings=s if gate is not None else s.model_copy(update={"max_attempts": 1}),
        model=model,
        log=log,
        base=base,
        runners=runners or (lambda path, agent, env: runner or LocalShell()),
        prices=PriceTable(s.prices),
        budget=budget,
        system=system_prompt(await asyncio.to_thread(instructions.root_section)),
        coordinated=False,
        retry_failed=False,  # one agent on the user's task is tried again only when the gate turns its work down
        state=state,
        verify=verify,
        brief=one_agent_brief(verify),
    )
    done = await run_plan(ctx, plan or one_task_plan(task), integrator)
    outcome = RunOutcome(run_id=log.run_id, status=done.status, branch=branch, base=base)
    outcome.summary = done.summaries.get(TASK_ID, "")
    outcome.reason = done.dropped.get(TASK_ID, "")
    for event in log.events(agent=TASK_ID, kinds=["agent_stopped", "commit"]):
        if isinstance(event, AgentStopped):
            outcome.steps, outcome.usage, outcome.cost_usd = event.steps, event.usage, event.cost_usd
            outcome.reason = outcome.reason if event.reason == "finished" else f"{event.reason}: {event.summary}"
        elif isinstance(event, Committed):
            outcome.commit, outcome.files = event.sha, event.files
    rejected = integrator.rejected if isinstance(integrator, GatedIntegrator) else None
    if done.status != "done" and rejected is not None and rejected.commit == outcome.commit:
        outcome.branch, outcome.reason = rejected.branch, rejected.why
    return outcome
