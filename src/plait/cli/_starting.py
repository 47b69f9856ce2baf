"""A run in this process, without typer: the agents' sandboxed runners, the run under its lease (with the live
view or progress lines), and the resume of an interrupted run.

`plait resume RUN` with plain options starts here from the fast start (`plait.cli._fast`), before typer or the
merge machinery is imported; the typer commands of `plait.cli.cmd_run` start their runs here too.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.cli._steering import LoggedSteering
from plait.errors import StateError, UsageError
from plait.events.lease import RunLease, lease_for
from plait.events.runlog import RunLog
from plait.events.store import ObservedStore
from plait.models.registry import make_model
from plait.run.base import RunBase, choose_base, new_run_id
from plait.run.context import ShellFactory, ShellFactoryForRun
from plait.run.maintenance import ended_note
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.state import load_state
from plait.settings import Settings, run_settings
from plait.ui._common import err, open_store, out, resolve_run, run_store
from plait.ui._safe import escaped
from plait.ui.progress import ProgressPrinter
from plait.workspace import Repo, Shell
from plait.workspace.sandbox import probe, sandboxed_shell

if TYPE_CHECKING:
    from plait.ui._run_report import Outcome

# Imported where used, so that a resumed run reaches its first model call without them: the live view, the report
# at the end (and its tables).

__all__ = ["report", "resume_run", "sandboxed_runners", "start_run"]


def sandboxed_runners(
    settings: Settings, repo: Repo, *, extra_path: str = "", quiet: bool = False, interactive: bool = False
) -> ShellFactoryForRun:
    """Agents' commands under the permission policy and the strongest OS sandbox that works here.

    With `interactive`, a command the policy says to ask about is put to the user on this terminal;
    otherwise (unattended, or under the live view) it is denied with the reason.
    """
    found = probe()
    layer = found.choose(settings.sandbox.layer)
    sandbox = settings.sandbox
    if not quiet:
        err.print(f"[dim]{found.report(layer, sandbox.limits, allow_unsandboxed=sandbox.allow_unsandboxed)}[/]")
    base_env = dict(os.environ)
    if extra_path:
        base_env["PATH"] = os.pathsep.join([extra_path, base_env.get("PATH", "")])

    def bind(log: RunLog) -> ShellFactory:
        def make(worktree: Path, agent: str, env: dict[str, str]) -> Shell:
            return sandboxed_shell(
                settings,
                worktree=worktree,
                common_dir=repo.common_dir,
                log=log,
                agent=agent,
                interactive=interactive,
                found=found,
                extra_env=env,
                env=base_env,
            )

        return make

    return bind


async def _await_renewing_lease(
    work: Coroutine[Any, Any, Outcome], lease: RunLease, live: tuple[ObservedStore, str] | None
) -> Outcome:
    """Await `work` (under the live view when `live` names its log and run) renewing the run's lease every few
    seconds, and release the lease at the end."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(5)
            lease.beat()

    beating = asyncio.ensure_future(beat())
    try:
        if live is not None:
            from plait.ui.live import run_with_dashboard

            store, run_id = live
            return await run_with_dashboard(work, lambda: RunLog(store.inner, run_id), steering=LoggedSteering())
        return await work
    finally:
        beating.cancel()
        lease.release()


def _run_holding_lease(
    work: Coroutine[Any, Any, Outcome], store: ObservedStore, run_id: str, *, tui: bool = False
) -> Outcome:
    """Run a run's coroutine to its end holding the run's lease, under the live view (`tui`) or with progress lines;
    ctrl+c exits 130 saying how to resume."""
    lease = lease_for(store, run_id)
    note = lease.acquire()
    if note:
        err.print(f"[yellow]note:[/] {note}")
    try:
        return asyncio.run(_await_renewing_lease(work, lease, (store, run_id) if tui else None))
    except KeyboardInterrupt:
        err.print(f"[yellow]interrupted[/]: nothing is lost; continue with `plait resume {run_id}`")
        raise SystemExit(130) from None


def start_run(
    repo: Repo,
    task: str,
    settings: Settings,
    *,
    as_json: bool,
    quiet: bool,
    runners: ShellFactoryForRun,
    **options: Any,
) -> tuple[Outcome, ObservedStore]:
    """Run (or continue) the run of `task` to its end in this process: its outcome and the log it was kept in."""
    llm = options.pop("model", None) or make_model(settings.model, settings)
    base = options.pop("base", None) or choose_base(repo, include_uncommitted=settings.include_uncommitted)
    store = run_store(open_store(repo, create=True), settings)
    tui = bool(options.pop("tui", False)) and sys.stdout.isatty() and sys.stdin.isatty() and not as_json
    if not quiet and not tui:
        store.listeners.append(ProgressPrinter(err, settings.max_attempts))
    run_id = options.pop("run_id", None) or new_run_id()
    log = RunLog(store, run_id)
    work = Orchestration(
        repo=repo,
        task=task,
        settings=settings,
        model=llm,
        log=log,
        base=base,
        runners=runners(log),
        **options,
    )
    return _run_holding_lease(orchestrate(work), store, run_id, tui=tui), store


def report(outcome: Outcome, store: ObservedStore, as_json: bool) -> int:
    """Say how the run ended (JSON with `as_json`) and return the command's exit code."""
    from plait.ui._run_report import report_outcome

    return report_outcome(outcome, store, as_json)


def resume_run(run_ref: str, repo_path: Path = Path(), *, as_json: bool = False, quiet: bool = False) -> int:
    """Continue an interrupted run: finished work is kept, answered model calls are not paid again. The exit code."""
    repo = Repo.discover(repo_path)
    with_store = open_store(repo, create=False)
    run_id = resolve_run(with_store, run_ref)
    state = load_state(RunLog(with_store, run_id))
    with_store.close()
    if state.kind:
        again = f"a session: `plait session --resume {run_id}`"
        again = again if state.kind == "session" else f"an investigation: `plait ask --follow-up {run_id} QUESTION`"
        raise UsageError(f"run {run_id} is not a change; it is {again} continues it")
    if state.started is None:
        raise StateError(f"run {run_id} has no start in the log: it cannot be resumed")
    if not state.unfinished:
        out.print(escaped(ended_note(repo, state)))
        return 0
    started = state.started
    settings = run_settings(repo.root, started.settings)
    llm = make_model(started.model, settings)
    base = RunBase(started.base_commit, started.base_ref, snapshot=started.snapshot)
    extra = str(Path(sys.executable).parent) if started.model.startswith("scripted:") else ""
    err.print(f"resuming run {run_id}: {escaped(started.task.splitlines()[0]) if started.task else ''}")
    outcome, store = start_run(
        repo,
        started.task,
        settings,
        as_json=as_json,
        quiet=quiet,
        runners=sandboxed_runners(settings, repo, extra_path=extra, quiet=quiet),
        model=llm,
        base=base,
        run_id=run_id,
        state=state,
    )
    code = report(outcome, store, as_json)
    store.close()
    return code
