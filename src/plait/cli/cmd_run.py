"""`plait run`, `plait resume` and `plait demo` as typer reads them: start a run, show its progress, and say where
the result is. The runs start in `plait.cli._starting`, which the fast start calls without typer for a plain resume."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated

import typer

from plait.agent.external import with_network
from plait.cli._options import JsonOpt, RepoOpt, RunArg
from plait.cli._starting import report, resume_run, sandboxed_runners, start_run
from plait.errors import EnvironmentProblem, UsageError
from plait.models.registry import make_model
from plait.plan.overlap import OverlapDecision
from plait.plan_model import Plan
from plait.redact import scrub_strings
from plait.settings import load_settings
from plait.ui._common import err, out
from plait.ui._safe import visible
from plait.workspace import Repo

# Imported where used: the plan's rendering (`--review`), the detached start.

__all__ = ["demo", "resume", "run"]


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


def _review(plan: Plan, decisions: list[OverlapDecision]) -> bool:
    # the planner wrote the plan: none of its text may drive the terminal while the user judges it
    shown = Plan.model_validate(scrub_strings(plan.model_dump(mode="json"), visible))
    said = [dataclasses.replace(d, what=visible(d.what), why=visible(d.why)) for d in decisions]
    from plait.plan.render import render_plan

    err.print(render_plan(shown, said))
    if err.is_terminal:  # the run waits for the user's word: the bell calls them back to this window
        err.bell()
    return typer.confirm("Run this plan?", default=True, err=True)


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
            help="auto: ask first whether the task is one agent's, split only when the estimate says it pays "
            "(the default); always: as the planner proposes.",
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
    outcome, store = start_run(
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
    code = report(outcome, store, as_json)
    store.close()
    raise typer.Exit(code)


def resume(
    run_ref: RunArg,
    repo_path: RepoOpt = Path(),
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Continue an interrupted run: finished work is kept, answered model calls are not paid again."""
    raise typer.Exit(resume_run(run_ref, repo_path, as_json=as_json, quiet=quiet))


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
    outcome, store = start_run(
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
    code = report(outcome, store, as_json)
    store.close()
    llm.assert_complete()
    if not as_json and outcome is not None:
        out.print(f"  the demo repository: {repo.root}")
        out.print(f"  see it all again:    plait show {outcome.run_id} -C {repo.root}")
        out.print(f"  the change:          git -C {repo.root} diff main {outcome.branch}")
    raise typer.Exit(code)
