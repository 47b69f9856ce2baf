"""Where a run picks the worker of a task's attempt: plait's own agent, or the external one the task or run names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.agent.external import BUILT_IN, Job, Worker, check_agent, make_worker
from plait.agent.external.claude_code import claude_env
from plait.agent.external.codex import codex_env
from plait.agent.external.opencode import opencode_env
from plait.agent.loop import Checkpoint
from plait.run.steer import notes_from
from plait.workspace import Shell, Worktree

if TYPE_CHECKING:
    from plait.plan_model import PlanTask
    from plait.run.parallel import TaskAttempts

__all__ = ["external_worker"]


def external_worker(
    attempts: TaskAttempts,
    task: PlanTask,
    runner: Shell,
    worktree: Worktree,
    attempt: int,
    checkpoint: Checkpoint | None = None,
) -> Worker | None:
    """The external worker of this attempt of `task`, or None for plait's own agent."""
    ctx = attempts.ctx
    agent = task.agent or ctx.settings.agent
    if agent == BUILT_IN:
        return None
    board = attempts.board
    notes = notes_from(board.notes_for(task.id) if board else None, attempts.steering[task.id].notes)

    s = ctx.settings
    kind = check_agent(agent)
    job = Job(
        log=ctx.log,
        agent_id=task.id,
        attempt=attempt,
        runner=runner,
        worktree=worktree.path,
        system=attempts.systems[task.id],
        model=s.model,
        max_turns=s.max_steps,
        wall_s=s.task_wall_time or 24 * 3600.0,
        output_limit=s.output_limit,
        budget=attempts.budgets.get(task.id),
        prices=ctx.prices,
        notes=notes,
        checkpoint=checkpoint,
        env=_env(kind, s.model),
    )
    return make_worker(agent, job)


def _env(kind: str, model: str) -> list[tuple[str, str]]:
    """The variables the agent's CLI is given: its endpoint, model and key."""
    if kind == "claude-code":
        return claude_env()
    if kind == "codex":
        return codex_env(model)
    return opencode_env(model) if kind == "opencode" else []
