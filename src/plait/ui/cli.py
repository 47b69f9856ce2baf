"""The `plait` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from plait import __version__
from plait.errors import EnvironmentProblem, PlaitError, UsageError
from plait.events.store import EventStore
from plait.settings import load_settings, settings_to_show
from plait.ui._common import JsonOpt, RepoOpt, err, has_log, open_store, out, resolve_run
from plait.ui._safe import escaped, visible
from plait.ui.cmd_init import detected_verify
from plait.ui.feed import make_redactor, redact_event
from plait.ui.summary import RunSummary, summarize
from plait.ui.transcript import render_transcript
from plait.workspace import Repo

__all__ = ["app", "main"]

app = typer.Typer(
    help="Run LLM coding agents in isolated git worktrees and weave their work into one tested result.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        out.print(f"plait {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    directory: Annotated[
        Path | None,
        typer.Option(
            "-C",
            metavar="DIR",
            help="Run as if plait was started in DIR (as git -C does); a command's own --repo is taken from there.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """plait plans, runs and integrates coding agents; every step is kept in an event log in .git/plait/."""
    if directory is not None:
        try:
            os.chdir(directory)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot work in {directory} (-C): {exc.strerror}") from None


def _summaries(store: EventStore) -> list[RunSummary]:
    return [summarize(run_id, store.events(run_id)) for run_id in store.run_ids()]


@app.command()
def runs(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """List the runs of this repository, newest last."""
    repo = Repo.discover(repo_path)
    summaries = _summaries(open_store(repo, create=False)) if has_log(repo) else []
    if summaries:  # a log written before events were redacted on the way in holds the task as it was given
        redact = make_redactor(load_settings(repo.root).settings)
        for s in summaries:
            s.task, s.model, s.reason = (visible(redact(x)) for x in (s.task, s.model, s.reason))
    if as_json:
        out.print_json(json.dumps([s.as_json() for s in summaries]), ensure_ascii=True)
        return
    if not summaries:
        out.print("no runs yet: start one with `plait run TASK`")
        return
    # the id is what --follow-up, --resume and every other command take: it is never cut; the model is
    # shortened and the task wraps instead (tokens are in --json and `plait cost`)
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("run", no_wrap=True, min_width=max(len(s.run_id) for s in summaries))
    table.add_column("status", no_wrap=True)
    table.add_column("model", overflow="ellipsis", max_width=22)
    table.add_column("calls", justify="right", no_wrap=True)
    table.add_column("cost", justify="right", no_wrap=True)
    table.add_column("task", min_width=16, overflow="fold")
    for s in summaries:
        status = s.status if s.status != "running" else "unfinished"
        task = s.task.strip().splitlines()[0] if s.task.strip() else ""
        table.add_row(s.run_id, status, escaped(s.model), str(s.model_calls), s.cost_text, escaped(task[:120]))
    out.print(table)


@app.command()
def show(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="A run id, a unique prefix of one, or `last`.")],
    task: Annotated[str | None, typer.Argument(help="Only this agent's part.")] = None,
    repo_path: RepoOpt = Path(),
    full: Annotated[bool, typer.Option("--full", help="Do not shorten long tool output.")] = False,
    no_pager: Annotated[
        bool, typer.Option("--no-pager", help="Print straight to the terminal, not through $PAGER.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show a run's transcript: messages, tool calls and results, and the diff of a run that changed code.

    In a terminal it goes through your pager ($PAGER, else `less -R`); lines are never cut."""
    repo = Repo.discover(repo_path)
    store = open_store(repo, create=False)
    run_id = resolve_run(store, run_ref)
    redact = make_redactor(load_settings(repo.root).settings)
    events = [redact_event(e, redact) for e in store.events(run_id, agent=None)]
    if task is not None and all(e.agent != task for e in events):
        agents = sorted({e.agent for e in events if e.agent and e.kind not in ("note", "policy")})
        raise UsageError(f"run {run_id} has no agent '{task}': its agents are {', '.join(agents) or 'none'}")
    if as_json:
        for event in events:
            if task is None or event.agent in ("", task):
                sys.stdout.write(event.model_dump_json() + "\n")
        return
    s = summarize(run_id, events)
    diff = ""
    if s.commit and s.base_commit:
        diff = redact(repo.git("diff", "--stat", "--patch", s.base_commit, s.commit, check=False))
    if no_pager or not out.is_terminal:
        render_transcript(out, run_id, events, diff=diff, agent=task, max_lines=0 if full else 40)
        return
    os.environ.setdefault("LESS", "-R")  # the pager shows the colours instead of their escape codes
    with out.pager(styles=True):
        render_transcript(out, run_id, events, diff=diff, agent=task, max_lines=0 if full else 40)


@app.command()
def config(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """Print the effective settings and where each value came from (secrets masked).

    A setting that cannot be taken is shown as BROKEN with why, the others as they would be without it, and the
    command exits 2."""
    try:
        repo: Repo | None = Repo.discover(repo_path)
    except EnvironmentProblem:
        repo = None
    layered = settings_to_show(repo.root if repo is not None else None)
    rows = layered.rows()
    if repo is not None and not layered.settings.verify_command and "verify_command" not in layered.broken:
        found = detected_verify(repo)  # what the gate would run, unless a setting says otherwise
        rows = [(k, found, "detected") if k == "verify_command" and found else (k, v, f) for k, v, f in rows]
    if as_json:
        out.print_json(json.dumps({k: {"value": v, "source": src} for k, v, src in rows}))
    else:
        table = Table("setting", "value", "from")
        for key, value, source in rows:
            table.add_row(escaped(key), escaped(value), escaped(source))
        out.print(table)
    for why in layered.broken.values():
        err.print(f"[red]plait: error:[/] {escaped(why)}", highlight=False, soft_wrap=True)
    if layered.broken:
        raise typer.Exit(UsageError.exit_code)


# Commands defined in their own modules register themselves here, one line each.
from plait.ui.cmd_run import register as _register_run  # noqa: E402

_register_run(app)
from plait.ui.cmd_maint import register as _register_maint  # noqa: E402

_register_maint(app)
from plait.ui.cmd_view import register as _register_view  # noqa: E402

_register_view(app)
from plait.ui.cmd_integrate import register as _register_integrate  # noqa: E402

_register_integrate(app)
from plait.ui.cmd_policy import register as _register_policy  # noqa: E402

_register_policy(app)
from plait.ui.cmd_bench import register as _register_bench  # noqa: E402

_register_bench(app)
from plait.ui.cmd_session import register as _register_session  # noqa: E402

_register_session(app)
from plait.ui.cmd_trust import register as _register_trust  # noqa: E402

_register_trust(app)
from plait.ui.cmd_mcp import register as _register_mcp  # noqa: E402

_register_mcp(app)
from plait.ui.cmd_review import register as _register_review  # noqa: E402

_register_review(app)
from plait.ui.cmd_pr import register as _register_pr  # noqa: E402

_register_pr(app)
from plait.ui.cmd_agent import register as _register_agent  # noqa: E402

_register_agent(app)
from plait.ui.cmd_init import register as _register_init  # noqa: E402

_register_init(app)


def main() -> None:
    """Entry point: expected failures are one line on stderr and an exit code, never a traceback."""
    try:
        app(prog_name="plait")  # `python -m plait` too: its help and shell completion name the command
    except PlaitError as exc:
        err.print(f"[red]plait: error:[/] {escaped(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        sys.exit(130)
