"""One attempt of a task, run where the backend placed it: a machine with no checkout of the user's repository.

    driver ── RemoteJob + bundles (base, start) ──► worker: clone from the bundle, worktree at the start commit,
                                                     restore the last checkpoint (a blob in the shared store),
                                                     run the agent against the shared log, commit
    driver ◄── RemoteOutcome (result commit + its bundle) ──┘

Everything the attempt writes goes to the shared event store: its model calls (so an attempt resumed on another
node replays them and pays for none again), its checkpoints (each a bundle of the commits since the attempt's
base, stored as a blob before the checkpoint is logged) and its result (also kept as a blob, so that a driver
that died before fetching it finds it). The worker writes no branch anywhere but in its own throwaway clone.
"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plait.agent.budget import Budget
from plait.events.types import ModelCallFinished

__all__ = ["RemoteJob", "RemoteOutcome", "SharedRunBudget", "checkpoint_key", "result_key", "run_job"]


@dataclass
class SharedRunBudget(Budget):
    """The run's budget as a worker sees it: its own agent's spending as it is charged, and every other agent's
    (on any node) as the shared log has it, read again before each check.

    The first check counts every answered call logged so far (this task's earlier attempts and a resumed
    attempt's replayed calls too); later ones add only the other agents' new calls.
    """

    own: str = ""
    cursor: int = -1

    def check(self) -> None:
        first, self.cursor = self.cursor < 0, max(self.cursor, 0)
        for event in self.log.events(kinds=["model_response"], after=self.cursor):
            self.cursor = max(self.cursor, event.seq)
            if isinstance(event, ModelCallFinished) and (first or event.agent != self.own):
                self.usage, self.usd = self.usage + event.response.usage, self.usd + event.cost_usd
        super().check()


_NODE_CACHE = "plait-nodes"
_STALE_S = 24 * 3600.0


def _node_repo(run_id: str, base: bytes, extra: bytes) -> Path:
    """The run's repository on this node: cloned from the base bundle by the first attempt placed here, then shared.

    The attempts of a run on one node take their worktrees from one clone (a lock keeps two first attempts from
    both cloning); `extra` (the commits an attempt starts from) is fetched into it. Clones of runs untouched for a
    day are removed on the way.
    """
    import fcntl
    import shutil
    import time

    from plait.workspace.bundles import clone_from_bundle, unbundle

    cache = _own_dir(Path(tempfile.gettempdir()) / f"{_NODE_CACHE}-{os.getuid()}")
    here = cache / run_id
    here.mkdir(mode=0o700, exist_ok=True)
    root = here / "repo"
    with (here / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".git").exists():
            partial = here / f"repo.{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            clone_from_bundle(partial, base)
            partial.rename(root)
            for old in cache.iterdir():
                if old != here and time.time() - old.stat().st_mtime > _STALE_S:
                    shutil.rmtree(old, ignore_errors=True)
        if extra:
            unbundle(root, extra)
        os.utime(here)
    return root


def _own_dir(path: Path) -> Path:
    """`path`, a directory of this user's alone: another user of the node must not plant the clone agents work in
    (a repository of theirs, with its own configuration, would run their commands here).

    Raises:
        StateError: `path` is a link, or belongs to someone else, or others may write to it.
    """
    import stat

    from plait.errors import StateError

    path.mkdir(mode=0o700, exist_ok=True)
    found = path.lstat()
    if stat.S_ISLNK(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o022:
        raise StateError(f"{path} is not this user's own directory: remove it, then run again")
    return path


def _drop_stale(repo: Any, branch: str) -> None:
    """Remove the worktree a killed run of this attempt left on `branch` in the node's clone (one runs at a time)."""
    listed = repo.git("worktree", "list", "--porcelain", check=False)
    path = ""
    for line in listed.splitlines():
        if line.startswith("worktree "):
            path = line.removeprefix("worktree ")
        elif line == f"branch refs/heads/{branch}" and path:
            repo.git("worktree", "remove", "--force", path, check=False)
    repo.git("worktree", "prune", check=False)


def checkpoint_key(sha: str) -> str:
    return f"checkpoint/{sha}"


def result_key(sha: str) -> str:
    return f"result/{sha}"


@dataclass(frozen=True)
class RemoteJob:
    """What a worker needs to run one attempt (picklable: plain values only)."""

    run_id: str
    task: dict[str, Any]
    """The plan's task, as JSON."""
    attempt: int
    branch: str
    base: str
    """The commit the attempt's worktree starts at (the run's base, or the integration head)."""
    carry: str
    """A commit whose changes against `base` the worktree starts with, uncommitted (a retry's kept work); ''."""
    brief: str
    system: str
    model: str
    settings: dict[str, Any]
    """The run's settings without its keys: those come from the worker's environment."""
    store: str
    scope: str
    env: dict[str, str] = field(default_factory=dict)
    plan: dict[str, Any] | None = None
    """The run's plan, as JSON: the agent reads and posts notes on the run's board (kept in the shared log)."""
    experts: list[dict[str, Any]] = field(default_factory=list)
    """The run's experts (their specs): asked through their actors."""
    """Variables for the agent's commands (its port block)."""


@dataclass(frozen=True)
class RemoteOutcome:
    node: str
    host: str
    commit: str = ""
    bundle: bytes = b""
    reason: str = ""
    """How the agent stopped (`finished`, `step_limit`, ...); '' when it did not get to stop."""
    ok: bool = False
    summary: str = ""
    failure: str = ""
    """The one-line error that ended the attempt before its agent did."""


def run_job(job: RemoteJob, base: bytes, extra: bytes, node: str) -> RemoteOutcome:
    """Run `job` in a throwaway clone made from the `base` bundle (and `extra`: the commits it starts from)."""
    return asyncio.run(_run(job, base, extra, node))


async def _run(job: RemoteJob, base: bytes, extra: bytes, node: str) -> RemoteOutcome:
    from plait.errors import PlaitError
    from plait.events.backends import open_event_store
    from plait.events.types import AttemptPlaced

    host = socket.gethostname()
    store = open_event_store(job.store, Path(), scope=job.scope)
    task_id = str(job.task["id"])
    try:
        placed = f"attempt {job.attempt} runs on node {node[:12]} ({host})"
        where = {"node": node, "host": host, "attempt": job.attempt}
        store.append(AttemptPlaced(run_id=job.run_id, agent=task_id, decision=placed, **where))
        with tempfile.TemporaryDirectory(prefix="plait-attempt-") as tmp:
            try:
                commit, bundle, reason, ok, summary = await _attempt(job, Path(tmp), base, extra, store)
            except PlaitError as exc:
                return RemoteOutcome(node, host, failure=str(exc))
        return RemoteOutcome(node, host, commit, bundle, reason, ok, summary)
    finally:
        store.close()


async def _attempt(
    job: RemoteJob, tmp: Path, base: bytes, extra: bytes, store: Any
) -> tuple[str, bytes, str, bool, str]:
    from plait.agent._replay import AttemptRecord
    from plait.agent.budget import Limits
    from plait.agent.context import context_budget
    from plait.agent.loop import Agent, AgentLimits, AgentResult
    from plait.agent.tools import Toolbox
    from plait.events.runlog import RunLog
    from plait.models.pricing import PriceTable
    from plait.models.registry import make_model
    from plait.plan_model import PlanTask
    from plait.run._wrapup import wrap_up
    from plait.run.state import charge_earlier_spending
    from plait.run.steer import Steering, notes_from
    from plait.settings import Settings
    from plait.workspace import Repo
    from plait.workspace.bundles import bundle, unbundle
    from plait.workspace.sandbox.factory import sandboxed_shell
    from plait.workspace.sandbox.probe import probe

    s = Settings.model_validate(job.settings)
    task = PlanTask.model_validate(job.task)
    run_id, task_id = job.run_id, task.id
    log = RunLog(store, run_id)
    root = _node_repo(job.run_id, base, extra)
    repo = Repo.discover(root)
    _drop_stale(repo, job.branch)
    worktree = repo.readd_worktree(tmp / "worktree", job.branch, job.base, owned=f"plait/{run_id}/")
    saved = AttemptRecord(log, task_id, job.attempt).last_checkpoint
    if saved:
        kept = store.get_blob(run_id, checkpoint_key(saved))
        if kept is None:
            from plait.errors import PlaitError

            raise PlaitError(f"checkpoint {saved[:10]} of {task_id} is logged but its bundle is not in the store")
        unbundle(root, kept)
        worktree.restore(saved)
    elif job.carry:
        # the last attempt's work, brought onto the new base, as uncommitted changes
        env = repo.location(worktree.path)
        repo.git("read-tree", "-m", "-u", "HEAD", job.carry, cwd=worktree.path, env=env)
        repo.git("reset", "--quiet", cwd=worktree.path, env=env)
    ref = f"refs/plait/checkpoints/{run_id}/{task_id}.{job.attempt}"
    last = {"sha": saved or job.base}

    async def checkpoint() -> str | None:
        sha = worktree.checkpoint(ref, last["sha"])
        if sha:  # in the shared store before the agent logs it: a node that resumes the attempt finds it there
            store.put_blob(run_id, checkpoint_key(sha), bundle(root, sha, since=[job.base]))
            last["sha"] = sha
        return sha

    runner = sandboxed_shell(
        s,
        worktree=worktree.path,
        common_dir=repo.common_dir,
        log=log,
        agent=task_id,
        interactive=False,
        found=probe(),
        extra_env=job.env,
    )
    model = make_model(job.model, s)
    prices = PriceTable(s.prices)
    run_budget = SharedRunBudget("run", Limits(tokens=s.run_max_tokens, usd=s.run_max_usd), log)
    run_budget.own = task_id
    budget = run_budget.child(task_id, Limits(tokens=s.task_max_tokens, usd=s.task_max_usd))
    charge_earlier_spending(run_budget, log, {task_id: budget})  # the task's own earlier spending, to its budget
    steering = Steering(log, task_id)
    tools: Any = Toolbox(worktree.path, runner, command_timeout=s.command_timeout, output_limit=s.output_limit)
    board = None
    if job.plan is not None:  # the board lives in the log: notes posted anywhere reach the agent at its next turn
        from plait.coord import Board, coord_tools
        from plait.plan_model import Plan

        board = Board.from_log(log, Plan.model_validate(job.plan))
        tools = coord_tools(tools, task_id, board, None, worktree=worktree)
    if job.experts:
        from plait.coord.asking import asking_tools
        from plait.coord.experts import ExpertSpec
        from plait.run.backends._experts import ActorExperts

        specs = [ExpertSpec.model_validate(e) for e in job.experts]
        tools = tools | asking_tools(task_id, ActorExperts(run_id, specs), job.attempt)
    agent = Agent(
        log=log,
        agent_id=task_id,
        model=model,
        toolbox=tools,
        prices=prices,
        system=job.system,
        limits=AgentLimits.from_settings(s),
        budget=budget,
        attempt=job.attempt,
        checkpoint=checkpoint,
        notes=notes_from(board.notes_for(task_id) if board is not None else None, steering.notes),
        context=context_budget(model.name, s.context_tokens),
        hold=steering.hold,
    )
    result: AgentResult | None = None
    try:
        result = await agent.run(job.brief)
    finally:
        commit = wrap_up(repo, log, worktree, task, result, number=job.attempt, head=job.base)
    data = bundle(root, commit, since=[job.base]) if commit else b""
    repo.git("branch", "-D", job.branch, check=False)  # it lives on in the bundle: the node's clone keeps no branch
    if commit:  # kept where a driver that dies before fetching it finds it
        store.put_blob(run_id, result_key(commit), data)
    return commit, data, result.reason, result.ok, result.summary
