"""An attempt's agent at work: its worktree bootstrapped, the shell of its commands, its tools (the board, claims and
experts around plait's own), built off the event loop and run with the run's MCP servers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from plait.agent._replay import last_checkpoint
from plait.agent.context import context_budget
from plait.agent.external import Worker
from plait.agent.loop import Agent, AgentLimits, AgentResult
from plait.agent.mcp_servers import McpAttempt, serve
from plait.agent.tools import Toolbox
from plait.agent.toolset import Toolset
from plait.coord import coord_tools
from plait.coord.asking import asking_tools
from plait.events.arriving import CHANNEL
from plait.events.types import Decision
from plait.plan_model import PlanTask
from plait.run._external import external_worker
from plait.run._retry import Carried
from plait.run.scheduler import Attempt
from plait.run.steer import notes_from
from plait.workspace import Shell, Worktree
from plait.workspace.bootstrap import port_env

if TYPE_CHECKING:
    from plait.run.parallel import TaskAttempts

__all__ = ["agent_at_work", "close_shell", "prepared"]


async def prepared(attempts: TaskAttempts, task: PlanTask, worktree: Worktree) -> Shell:
    """The worktree bootstrapped, and the shell of its agent's commands (closed here when the bootstrap fails)."""
    ctx = attempts.ctx
    runner = ctx.runners(worktree.path, task.id, port_env(attempts.slots[task.id], ctx.settings.port_block))
    try:
        copied = attempts.bootstrap.copy_includes(worktree.path)
        if copied:
            what = f"copied {len(copied)} untracked file(s) in"
            data: dict[str, object] = {"files": copied}
            ctx.log.append(Decision(run_id=ctx.log.run_id, agent=task.id, topic="bootstrap", decision=what, data=data))
        await attempts.bootstrap.run_setup(worktree.path, runner)
    except BaseException:
        close_shell(runner)
        raise
    return runner


async def agent_at_work(
    attempts: TaskAttempts,
    task: PlanTask,
    worktree: Worktree,
    runner: Shell,
    number: int,
    last: Attempt | None = None,
    carried: Carried | None = None,
    *,
    waiting: Callable[[Toolset], Toolset] | None = None,
) -> AgentResult:
    """The attempt's agent, built and run in `worktree`; `waiting` wraps its tools (see `_early`)."""
    brief = attempts.brief_for(task, last, carried)
    ctx = attempts.ctx
    at = McpAttempt(ctx.settings, ctx.repo.root, ctx.base.commit, ctx.log, task.id, number, runner, worktree.path)
    # built off the event loop: its toolbox reads the environment for secrets and PATH for tools
    agent = await attempts.git.run(_agent, attempts, task, runner, worktree, number)
    if waiting is not None and isinstance(agent, Agent):
        agent.toolbox = waiting(agent.toolbox)
    return await serve(at, agent, brief)


def close_shell(runner: Shell) -> None:
    """Close an attempt's shell: a sandboxed one removes its cgroups and private tmp then, not whenever it is
    collected."""
    close = getattr(runner, "close", None)
    if callable(close):
        close()


def _agent(attempts: TaskAttempts, task: PlanTask, runner: Shell, worktree: Worktree, attempt: int) -> Worker:
    ctx = attempts.ctx
    s, path = ctx.settings, worktree.path
    ref = f"refs/plait/checkpoints/{ctx.log.run_id}/{task.id}.{attempt}"
    last = {"sha": last_checkpoint(ctx.log, task.id, attempt) or worktree.base}

    async def checkpoint() -> str | None:
        sha = await attempts.git.run(worktree.checkpoint, ref, last["sha"])
        if sha:
            last["sha"] = sha
        return sha

    worker = external_worker(attempts, task, runner, worktree, attempt, checkpoint)  # an external CLI, when named
    toolbox = Toolbox(path, runner, command_timeout=s.command_timeout, output_limit=s.output_limit)
    steering = attempts.steering[task.id]
    return worker or Agent(
        log=ctx.log,
        agent_id=task.id,
        model=ctx.model,
        toolbox=_tools(attempts, task, toolbox, worktree) | asking_tools(task.id, attempts.experts.experts, attempt),
        prices=ctx.prices,
        system=attempts.systems[task.id],
        limits=AgentLimits.from_settings(s),
        budget=attempts.budgets.get(task.id),
        attempt=attempt,
        checkpoint=checkpoint,
        notes=notes_from(attempts.board.notes_for(task.id) if attempts.board else None, steering.notes),
        context=context_budget(ctx.model.name, s.context_tokens),
        hold=steering.hold,
        arriving=CHANNEL.arriving(ctx.log.run_id, task.id),
        turns=attempts.turns,
    )


def _tools(attempts: TaskAttempts, task: PlanTask, toolbox: Toolbox, worktree: Worktree) -> Toolset:
    """The task's tools; in a parallel run, with the board and leases around them."""
    if attempts.board is None:
        return toolbox
    head = attempts.integrator
    return coord_tools(toolbox, task.id, attempts.board, attempts.leases, worktree=worktree, head=lambda: head.head)
