"""The `plait` command line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from plait import __version__
from plait.errors import EnvironmentProblem, PlaitError, UsageError
from plait.events.store import ObservedStore, SQLiteEventStore
from plait.models.registry import make_model
from plait.run.single import RunOutcome, choose_base, run_single
from plait.settings import load_settings
from plait.ui.progress import ProgressPrinter
from plait.ui.summary import RunSummary, summarize
from plait.ui.transcript import render_transcript
from plait.workspace import Repo

__all__ = ["app", "main"]

app = typer.Typer(
    help="Run LLM coding agents in isolated git worktrees and weave their work into one tested result.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)
out = Console(soft_wrap=True)
err = Console(stderr=True)

RepoOpt = Annotated[Path, typer.Option("--repo", "-C", help="The git repository to work on.", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def _version(value: bool) -> None:
    if value:
        out.print(f"plait {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """plait plans, runs and integrates coding agents; every step is kept in an event log in .git/plait/."""


def _store(repo: Repo, *, create: bool) -> SQLiteEventStore:
    path = repo.common_dir / "plait" / "events.db"
    if not create and not path.exists():
        raise EnvironmentProblem(f"no plait runs in {repo.root} yet: start one with `plait run TASK`")
    return SQLiteEventStore(path)


def _confirm_base(repo: Repo, *, include_uncommitted: bool, yes: bool) -> None:
    dirty = repo.dirty_paths()
    if not dirty or include_uncommitted:
        return
    message = (
        f"{len(dirty)} uncommitted change(s) in {repo.root} will not be seen by the agent: "
        f"the run starts from {repo.head_ref()} ({repo.head()[:10]}) without them"
    )
    if yes:
        err.print(f"[yellow]note:[/] {message}")
        return
    if not sys.stdin.isatty():
        raise EnvironmentProblem(message + "; pass --yes to go ahead, or --include-uncommitted to snapshot them")
    if not typer.confirm(message + ". Go ahead?", default=False, err=True):
        raise typer.Exit(1)


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What the agent should do; `-` reads it from stdin.")],
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="openai:NAME, anthropic:NAME, openai-compatible:NAME@URL, …")
    ] = None,
    max_steps: Annotated[int | None, typer.Option(help="Model calls an agent may make.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask; start from HEAD if there are changes.")] = False,
    include_uncommitted: Annotated[
        bool | None, typer.Option("--include-uncommitted", help="Start from a snapshot of uncommitted changes.")
    ] = None,
    repo_path: RepoOpt = Path(),
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Run an agent on TASK in its own worktree; the result is committed on branch plait/RUN/main."""
    if task == "-":
        task = sys.stdin.read()
    if not task.strip():
        raise UsageError("the task is empty: say what the agent should do")
    repo = Repo.discover(repo_path)
    flags = {"model": model, "max_steps": max_steps, "include_uncommitted": include_uncommitted}
    settings = load_settings(repo.root, flags).settings
    llm = make_model(settings.model, settings)
    _confirm_base(repo, include_uncommitted=settings.include_uncommitted, yes=yes)
    base = choose_base(repo, include_uncommitted=settings.include_uncommitted)
    store = ObservedStore(_store(repo, create=True))
    if not quiet:
        store.listeners.append(ProgressPrinter(err))
    outcome = _drive(run_single(repo, task, settings=settings, model=llm, store=store, base=base), store, repo)
    _report(outcome, as_json)
    raise typer.Exit(0 if outcome.status == "done" else 1)


def _drive(coro: object, store: ObservedStore, repo: Repo) -> RunOutcome:
    try:
        return asyncio.run(coro)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        last = store.run_ids()[-1:] or ["?"]
        err.print(f"[yellow]interrupted[/]: partial work of run {last[0]} is committed on its branch")
        raise typer.Exit(130) from None
    finally:
        store.close()


def _report(outcome: RunOutcome, as_json: bool) -> None:
    if as_json:
        data = {
            "run_id": outcome.run_id,
            "status": outcome.status,
            "branch": outcome.branch,
            "commit": outcome.commit,
            "base_commit": outcome.base.commit,
            "summary": outcome.summary,
            "reason": outcome.reason,
            "files": outcome.files,
            "steps": outcome.steps,
            "usage": outcome.usage.model_dump(),
            "cost_usd": round(outcome.cost_usd, 6),
        }
        out.print_json(json.dumps(data))
        return
    colour = "green" if outcome.status == "done" else "red"
    out.print(f"[{colour} bold]{outcome.status}[/] run {outcome.run_id}: {outcome.summary or outcome.reason}")
    if outcome.commit:
        out.print(f"  branch {outcome.branch} @ {outcome.commit[:10]}, {len(outcome.files)} file(s) changed")
    else:
        out.print("  no changes were made")
    out.print(
        f"  {outcome.steps} model calls, {outcome.usage.input_tokens} tokens in "
        f"({outcome.usage.cached_tokens} cached), {outcome.usage.output_tokens} out, ${outcome.cost_usd:.4f}"
    )
    out.print(f"  transcript: plait show {outcome.run_id}")


def _summaries(store: SQLiteEventStore) -> list[RunSummary]:
    return [summarize(run_id, store.events(run_id)) for run_id in store.run_ids()]


@app.command()
def runs(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """List the runs of this repository, newest last."""
    repo = Repo.discover(repo_path)
    path = repo.common_dir / "plait" / "events.db"
    summaries = _summaries(_store(repo, create=False)) if path.exists() else []
    if as_json:
        out.print_json(json.dumps([s.as_json() for s in summaries]))
        return
    if not summaries:
        out.print("no runs yet: start one with `plait run TASK`")
        return
    table = Table("run", "status", "model", "calls", "tokens", "cost", "task")
    for s in summaries:
        status = s.status if s.status != "running" else "unfinished"
        table.add_row(
            s.run_id,
            status,
            s.model,
            str(s.model_calls),
            str(s.usage.total_tokens),
            f"${s.cost_usd:.4f}",
            s.task.splitlines()[0][:50] if s.task else "",
        )
    out.print(table)


def _resolve_run(store: SQLiteEventStore, ref: str) -> str:
    ids = store.run_ids()
    if ref == "last" and ids:
        return ids[-1]
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run '{ref}' in this repository: `plait runs` lists them")
    raise UsageError(f"'{ref}' matches {len(matches)} runs: give more of the id")


@app.command()
def show(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="A run id, a unique prefix of one, or `last`.")],
    task: Annotated[str | None, typer.Argument(help="Only this agent's part.")] = None,
    repo_path: RepoOpt = Path(),
    full: Annotated[bool, typer.Option("--full", help="Do not shorten long tool output.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show a run's transcript: messages, tool calls and results, and the final diff."""
    repo = Repo.discover(repo_path)
    store = _store(repo, create=False)
    run_id = _resolve_run(store, run_ref)
    events = store.events(run_id, agent=None)
    if as_json:
        for event in events:
            if task is None or event.agent in ("", task):
                sys.stdout.write(event.model_dump_json() + "\n")
        return
    s = summarize(run_id, events)
    diff = ""
    if s.commit and s.base_commit:
        diff = repo.git("diff", "--stat", "--patch", s.base_commit, s.commit, check=False)
    render_transcript(out, run_id, events, diff=diff, agent=task, max_lines=0 if full else 40)


@app.command()
def config(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """Print the effective settings and where each value came from (secrets masked)."""
    try:
        root: Path | None = Repo.discover(repo_path).root
    except EnvironmentProblem:
        root = None
    layered = load_settings(root)
    if as_json:
        out.print_json(json.dumps({k: {"value": v, "source": src} for k, v, src in layered.rows()}))
        return
    table = Table("setting", "value", "from")
    for key, value, source in layered.rows():
        table.add_row(key, value, source)
    out.print(table)


@app.command()
def demo(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Where to create the demo repository (default: a new temp dir).")
    ] = None,
    fast: Annotated[bool, typer.Option("--fast", help="No pauses between the scripted model's turns.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a scripted agent on a bundled repository: no network, no API key."""
    from plait.demo import demo_runner, prepare_demo

    repo, task, llm = prepare_demo(directory, fast=fast)
    settings = load_settings(repo.root).settings
    err.print(f"[bold]plait demo[/]: a scripted agent works in a copy of a small project at {repo.root}")
    err.print(f"[bold]task:[/] {task}")
    store = ObservedStore(_store(repo, create=True))
    if not as_json:
        store.listeners.append(ProgressPrinter(err))
    base = choose_base(repo, include_uncommitted=False)
    work = run_single(repo, task, settings=settings, model=llm, store=store, base=base, runner=demo_runner())
    outcome = _drive(work, store, repo)
    llm.assert_complete()
    _report(outcome, as_json)
    if not as_json:
        out.print(f"  the demo repository: {repo.root}")
        out.print(f"  see it all again:    plait show {outcome.run_id} -C {repo.root}")
        out.print(f"  the change:          git -C {repo.root} diff {outcome.base.commit[:10]} {outcome.branch}")
    raise typer.Exit(0 if outcome.status == "done" else 1)


# Commands defined in their own modules register themselves here, one line each.


def main() -> None:
    """Entry point: expected failures are one line on stderr and an exit code, never a traceback."""
    try:
        app()
    except PlaitError as exc:
        err.print(f"[red]plait: error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        sys.exit(130)
