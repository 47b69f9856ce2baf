"""A first attempt's agent asks its model while its worktree is made: the making is off the critical path.

    `worktree` decision, `task_started` logged ─┬─► worktree made (git thread), bootstrapped, its shell made
                                                └─► agent built, asking its model
    a tool call (`finish` too) waits for the worktree; the wrap-up waits for it too

A model's answer takes longer than making a worktree, so an agent seldom waits: each link of a chain of tasks
starts its first call as soon as the link before is integrated, not a worktree later. `task_started` is logged
before the worktree is made: a resumed process makes the worktree of a started attempt again anyway. Only a
fresh run's first attempts start so, with plait's own agent and no MCP servers (whose tools, listed by
servers running in the worktree, are part of the first call); the others make their worktree first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from plait.agent._mcp_json import run_servers
from plait.agent.external import BUILT_IN
from plait.agent.loop import AgentResult
from plait.agent.toolset import Run, ToolOutcome, Toolset
from plait.errors import PlaitError
from plait.events.runlog import RunLog
from plait.messages import ToolCall
from plait.plan_model import PlanTask
from plait.run._at_work import agent_at_work, prepared
from plait.run._opening import Opening, log_opening, log_started, make_worktree
from plait.workspace import Shell, Worktree
from plait.workspace.command import CommandResult

if TYPE_CHECKING:
    from plait.run.parallel import TaskAttempts

__all__ = ["LaterShell", "early_work", "starts_early"]


class LaterShell:
    """The shell of a worktree being made: a command waits for the worktree's own shell, then runs in it."""

    def __init__(self, ready: asyncio.Future[Shell]) -> None:
        self._ready = ready

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        """Run `command` in the worktree's own shell, once the worktree is made."""
        shell = await asyncio.shield(self._ready)
        return await shell.run(command, cwd=cwd, timeout=timeout, output_limit=output_limit)

    def close(self) -> None:
        """Close the worktree's own shell, if it was made."""
        if self._ready.done() and not self._ready.cancelled() and self._ready.exception() is None:
            close = getattr(self._ready.result(), "close", None)
            if callable(close):
                close()


def _waiting(ready: asyncio.Future[Shell]) -> Callable[[Toolset], Toolset]:
    """Tools whose every call waits for the worktree first."""

    async def around(call: ToolCall, run: Run) -> ToolOutcome:
        await asyncio.shield(ready)
        return await run(call)

    return lambda tools: tools.wrap(around)


async def starts_early(attempts: TaskAttempts, task: PlanTask, number: int) -> bool:
    """Whether this attempt's agent starts while its worktree is made (see the module's docstring)."""
    ctx = attempts.ctx
    if ctx.state is not None or number > 1 or (task.agent or ctx.settings.agent) != BUILT_IN:
        return False
    if attempts.mcp_servers is None:  # the run's MCP servers, its settings' and its base's `.mcp.json`, looked up once
        attempts.mcp_servers = asyncio.ensure_future(
            asyncio.to_thread(run_servers, dict(ctx.settings.mcp_servers), ctx.repo.root, ctx.base.commit, trusted=True)
        )
    found = await asyncio.shield(attempts.mcp_servers)
    return not found.servers and not found.ignored


async def early_work(attempts: TaskAttempts, task: PlanTask, opening: Opening) -> tuple[AgentResult | None, str, str]:
    """The attempt logged as started, its agent at work while its worktree is made; then its wrap-up: (result,
    failure, commit)."""
    ctx = attempts.ctx
    await attempts.git.run(_log_opened, ctx.log, task.id, task.title, opening)
    worktree = _bound(attempts, opening)
    made = asyncio.ensure_future(_made(attempts, task, worktree))
    ready = asyncio.ensure_future(_ready(attempts, task, worktree, made))
    shell = LaterShell(ready)
    result: AgentResult | None = None
    failure = ""
    try:
        result = await agent_at_work(attempts, task, worktree, shell, opening.attempt, waiting=_waiting(ready))
    except PlaitError as exc:
        failure = str(exc)
    finally:
        try:
            commit = await asyncio.shield(_wrapped_up(attempts, made, ready, worktree, task, result))
        finally:
            shell.close()
        if result is None and not failure:
            await attempts.finished(task.id, "interrupted", "stopped before the agent finished", commit)
    return result, failure, commit


def _log_opened(log: RunLog, task_id: str, title: str, opening: Opening) -> None:
    """Log the attempt's worktree as intended, and the attempt as started."""
    log_opening(log, task_id, opening)
    log_started(log, task_id, title, opening)


def _bound(attempts: TaskAttempts, opening: Opening) -> Worktree:
    """The worktree the opening says, as `make_worktree` will make it: the agent's tools are bound to it now."""
    return Worktree(Path(opening.path).absolute(), opening.branch, opening.base, attempts.ctx.repo)


async def _made(attempts: TaskAttempts, task: PlanTask, worktree: Worktree) -> None:
    """Make the worktree the agent's tools were bound to."""
    ctx = attempts.ctx
    path, branch, base, layered = worktree.path, worktree.branch, worktree.base, ctx.settings.layered_worktrees
    made = await attempts.git.run(
        make_worktree, ctx.repo, path, branch, base, fresh=True, run_id=ctx.log.run_id, layered=layered
    )
    if made != worktree:
        raise PlaitError(f"the worktree of {task.id} was made at {made.base[:10]}, not at {worktree.base[:10]}")


async def _ready(attempts: TaskAttempts, task: PlanTask, worktree: Worktree, made: asyncio.Future[None]) -> Shell:
    """The worktree made and bootstrapped, and its shell."""
    await made
    return await prepared(attempts, task, worktree)


async def _wrapped_up(
    attempts: TaskAttempts,
    made: asyncio.Future[None],
    ready: asyncio.Future[Shell],
    worktree: Worktree,
    task: PlanTask,
    result: AgentResult | None,
) -> str:
    """The attempt's wrap-up once its worktree is made and its bootstrap over; '' when it could not be made."""
    await asyncio.wait([made])
    await asyncio.wait([ready])
    if not ready.cancelled():
        ready.exception()  # seen here, when no tool call waited for it: the agent's failure is the attempt's
    if made.cancelled() or made.exception() is not None:
        return ""
    return await attempts.git.run(attempts.wrap_up, worktree, task, result, 1)  # only first attempts start early
