"""`plait run` and `plait demo`: start a run, show its progress, and say where the result is."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plait.agent.external import with_network
from plait.cli._options import JsonOpt, RepoOpt, RunArg
from plait.cli._steering import LoggedSteering
from plait.errors import EnvironmentProblem, StateError, UsageError
from plait.events.lease import RunLease, lease_for
from plait.events.runlog import RunLog
from plait.events.store import ObservedStore
from plait.models.registry import make_model
from plait.plan.overlap import OverlapDecision
from plait.plan_model import Plan
from plait.redact import scrub_strings
from plait.run.base import RunBase, choose_base, new_run_id
from plait.run.context import ShellFactory, ShellFactoryForRun
from plait.run.maintenance import ended_note
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.session import run_kind
from plait.run.state import load_state
from plait.settings import Settings, load_settings, run_settings
from plait.ui._common import err, open_store, out, resolve_run, run_store
from plait.ui._safe import escaped, visible
from plait.ui.progress import ProgressPrinter
from plait.workspace import Repo, Shell
from plait.workspace.sandbox import probe, sandboxed_shell

if TYPE_CHECKING:
    from plait.ui._run_report import Outcome

# Imported where used, so that a resumed run reaches its first model call without them: the plan's rendering
# (`--review`), the detached start, the report at the end (and the tables of both).

__all__ = ["demo", "resume", "run", "sandboxed_runners"]


def _confirm_base(repo: Repo, *, include_uncommitted: bool, yes: bool) -> None:
    dirty = repo.dirty_paths()
    if not dirty or include_uncommitted:
        return
    message = (
        f"{len(dirty)} uncommitted change(s) in {repo.root} will not be seen by the agents: "
        f"the run starts from {repo.head_ref()} ({repo.head()[:10]}) without them"
    )
    if yes:
        err.print(f"[yellow]note:[/] {message}")
        return
    if not sys.stdin.isatty():
        raise EnvironmentProblem(message + "; pass --yes to go ahead, or --include-uncommitted to snapshot them")
    if not typer.confirm(message + ". Go ahead?", default=False, err=True):
        raise typer.Exit(1)


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


def _review(plan: Plan, decisions: list[OverlapDecision]) -> bool:
    # the planner wrote the plan: none of its text may drive the terminal while the user judges it
    shown = Plan.model_validate(scrub_strings(plan.model_dump(mode="json"), visible))
    said = [dataclasses.replace(d, what=visible(d.what), why=visible(d.why)) for d in decisions]
    from plait.plan.render import render_plan

    err.print(render_plan(shown, said))
    if err.is_terminal:  # the run waits for the user's word: the bell calls them back to this window
        err.bell()
    return typer.confirm("Run this plan?", default=True, err=True)


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
        raise typer.Exit(130) from None


def _start(
    repo: Repo,
    task: str,
    settings: Settings,
    *,
    as_json: bool,
    quiet: bool,
    runners: ShellFactoryForRun,
    **options: Any,
) -> tuple[Outcome, ObservedStore]:
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


def _report(outcome: Outcome, store: ObservedStore, as_json: bool) -> int:
    from plait.ui._run_report import report_outcome

    return report_outcome(outcome, store, as_json)


def run(
    task: Annotated[str, typer.Argument(help="What to do; `-` reads it from stdin.")],
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="openai:NAME, anthropic:NAME, openai-compatible:NAME@URL, …")
    ] = None,
    plan_file: Annotated[Path | None, typer.Option("--plan", help="Run this plan (YAML) instead of planning.")] = None,
    single: Annotated[bool, typer.Option("--single", help="One agent, no planning.")] = False,
    split: Annotated[
        str | None,
        typer.Option(
            "--split",
            help="auto: split only when the estimate says it pays (the default); always: as the planner proposes.",
        ),
    ] = None,
    review: Annotated[bool, typer.Option("--review", help="Show the plan and ask before going on.")] = False,
    concurrency: Annotated[int | None, typer.Option(help="Agents at work at the same time.")] = None,
    max_usd: Annotated[float | None, typer.Option("--max-usd", help="Dollars the run may spend.")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Model calls an agent may make.")] = None,
    no_llm: Annotated[bool, typer.Option("--no-llm-merge", help="Resolve conflicts without a model.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask; start from HEAD if there are changes.")] = False,
    include_uncommitted: Annotated[
        bool | None, typer.Option("--include-uncommitted", help="Start from a snapshot of uncommitted changes.")
    ] = None,
    repo_path: RepoOpt = Path(),
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    no_tui: Annotated[bool, typer.Option("--no-tui", help="Plain progress lines, even in a terminal.")] = False,
    detach: Annotated[bool, typer.Option("--detach", help="Go on in the background; print the run id.")] = False,
    run_id: Annotated[str | None, typer.Option("--run-id", hidden=True)] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent", help="Who works on each task: plait, claude-code, codex, opencode, or command:TEMPLATE."
        ),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option("--backend", help="Where attempts run: local (the default) or ray (a Ray cluster)."),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", metavar="ADDRESS", help="The Ray cluster for --backend ray (HOST:PORT)."),
    ] = None,
) -> None:
    """Plan TASK, run its parts in parallel worktrees, and integrate them on plait/RUN/integration.

    A task that does not split runs as one agent, its result on plait/RUN/main.
    """
    if task == "-":
        task = sys.stdin.read()
    if not task.strip():
        raise UsageError("the task is empty: say what the agents should do")
    if single and plan_file is not None:
        raise UsageError("--single and --plan exclude each other: --single runs one agent without a plan")
    repo = Repo.discover(repo_path)
    flags = {
        "model": model,
        "max_steps": max_steps,
        "include_uncommitted": include_uncommitted,
        "concurrency": concurrency,
        "run_max_usd": max_usd,
        "split": split,
        "agent": agent,
        "backend": backend,
        "ray_address": ray_address,
    }
    settings, note = with_network(load_settings(repo.root, flags).settings)
    if note and not quiet:
        err.print(f"[yellow]note:[/] {note}")
    llm = make_model(settings.model, settings)
    _confirm_base(repo, include_uncommitted=settings.include_uncommitted, yes=yes)
    if detach:
        from plait.cli._detach import detach as detach_run

        raise typer.Exit(detach_run(repo, task, as_json=as_json, review=review))
    # policy questions go to the user only in a plain terminal session (the live view owns the screen)
    ask = (no_tui or review) and sys.stdin.isatty() and sys.stderr.isatty() and not yes
    outcome, store = _start(
        repo,
        task,
        settings,
        as_json=as_json,
        quiet=quiet,
        runners=sandboxed_runners(settings, repo, quiet=quiet, interactive=ask),
        model=llm,
        run_id=run_id,
        plan_file=plan_file,
        one_agent=single,
        use_llm_resolver=not no_llm,
        review=_review if review else None,
        tui=not no_tui and not review,  # the review asks on the terminal before the view would start
    )
    code = _report(outcome, store, as_json)
    store.close()
    raise typer.Exit(code)


def resume(
    run_ref: RunArg,
    repo_path: RepoOpt = Path(),
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Continue an interrupted run: finished work is kept, answered model calls are not paid again."""
    repo = Repo.discover(repo_path)
    with_store = open_store(repo, create=False)
    run_id = resolve_run(with_store, run_ref)
    log = RunLog(with_store, run_id)
    state, kind = load_state(log), run_kind(log)
    with_store.close()
    if kind:
        again = f"a session: `plait session --resume {run_id}`"
        again = again if kind == "session" else f"an investigation: `plait ask --follow-up {run_id} QUESTION`"
        raise UsageError(f"run {run_id} is not a change; it is {again} continues it")
    if state.started is None:
        raise StateError(f"run {run_id} has no start in the log: it cannot be resumed")
    if not state.unfinished:
        out.print(escaped(ended_note(repo, state)))
        raise typer.Exit(0)
    started = state.started
    settings = run_settings(repo.root, started.settings)
    llm = make_model(started.model, settings)
    base = RunBase(started.base_commit, started.base_ref, snapshot=started.snapshot)
    extra = str(Path(sys.executable).parent) if started.model.startswith("scripted:") else ""
    err.print(f"resuming run {run_id}: {escaped(started.task.splitlines()[0]) if started.task else ''}")
    outcome, store = _start(
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
    code = _report(outcome, store, as_json)
    store.close()
    raise typer.Exit(code)


def demo(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Where to create the demo repository (default: a new temp dir).")
    ] = None,
    fast: Annotated[bool, typer.Option("--fast", help="No pauses between the scripted model's turns.")] = False,
    single: Annotated[bool, typer.Option("--single", help="The one-agent demo.")] = False,
    no_tui: Annotated[bool, typer.Option("--no-tui", help="Plain progress lines, even in a terminal.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run scripted agents on a bundled repository: no network, no API key."""
    from plait.demo import prepare_demo

    repo, task, llm = prepare_demo(directory, fast=fast, parallel=not single)
    settings = load_settings(repo.root).settings
    kind = "one scripted agent works" if single else "scripted agents plan and work in parallel"
    err.print(f"[bold]plait demo[/]: {kind} in a copy of a small project at {repo.root}")
    err.print(f"[bold]task:[/] {task}")
    # the demo runs only its own scripted commands: where no OS sandbox works, it says so and goes on
    allow = settings.sandbox.model_copy(update={"allow_unsandboxed": True})
    settings = settings.model_copy(update={"sandbox": allow})
    runners = sandboxed_runners(settings, repo, extra_path=str(Path(sys.executable).parent))
    outcome, store = _start(
        repo,
        task,
        settings,
        as_json=as_json,
        quiet=False,
        runners=runners,
        model=llm,
        one_agent=single,
        use_llm_resolver=False,
        tui=not no_tui,
    )
    code = _report(outcome, store, as_json)
    store.close()
    llm.assert_complete()
    if not as_json and outcome is not None:
        out.print(f"  the demo repository: {repo.root}")
        out.print(f"  see it all again:    plait show {outcome.run_id} -C {repo.root}")
        out.print(f"  the change:          git -C {repo.root} diff main {outcome.branch}")
    raise typer.Exit(code)
