"""The `plait` command line.

The top-level help lists every command from `COMMANDS`, a static table; a command's module is imported only when
that command runs (or shows its own help), so `plait runs` does not pay for `plait run`'s imports.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from plait import __version__
from plait.errors import EnvironmentProblem, PlaitError, UsageError
from plait.textsafe import visible
from plait.ui._common import JsonOpt, RepoOpt, console, err, out

if TYPE_CHECKING:
    from typer import _click

    from plait.events.store import EventStore
    from plait.ui.summary import RunSummary

__all__ = ["COMMANDS", "app", "load_command", "main"]


class Entry(NamedTuple):
    """Where a command lives and the line the top-level help shows for it (its docstring's first paragraph)."""

    module: str
    help: str


COMMANDS: dict[str, Entry] = {
    "runs": Entry("plait.ui.cli", "List the runs of this repository, newest last."),
    "show": Entry(
        "plait.ui.cli",
        "Show a run's transcript: messages, tool calls and results, and the diff of a run that changed code.",
    ),
    "config": Entry("plait.ui.cli", "Print the effective settings and where each value came from (secrets masked)."),
    "run": Entry(
        "plait.ui.cmd_run",
        "Plan TASK, run its parts in parallel worktrees, and integrate them on plait/RUN/integration.",
    ),
    "resume": Entry(
        "plait.ui.cmd_run",
        "Continue an interrupted run: finished work is kept, answered model calls are not paid again.",
    ),
    "demo": Entry("plait.ui.cmd_run", "Run scripted agents on a bundled repository: no network, no API key."),
    "doctor": Entry(
        "plait.ui.cmd_maint",
        "Check this repository's plait state: the event log, worktrees, branches, checkpoints, ref locks.",
    ),
    "gc": Entry(
        "plait.ui.cmd_maint",
        "Remove what ended runs left or no longer need (worktrees, refs, stale locks, spent branches).",
    ),
    "status": Entry(
        "plait.ui.cmd_view",
        "Show every agent of a run (live in a terminal), whether it runs in another process or on another machine.",
    ),
    "attach": Entry(
        "plait.ui.cmd_view",
        "Follow a run another process runs (`plait run --detach`): the live view in a terminal, else its progress "
        "lines from the start until it ends.",
    ),
    "log": Entry(
        "plait.ui.cmd_view",
        "Print a run's events in order (secrets redacted): one line each, or JSON lines with --json.",
    ),
    "cost": Entry(
        "plait.ui.cmd_view",
        "What a run spent, by agent, by model and by phase, and its speed-up over one agent after another.",
    ),
    "report": Entry(
        "plait.ui.cmd_view",
        "Summarize a run; with --html, write one HTML file (timeline, merges, cost, changes, transcripts).",
    ),
    "trace": Entry(
        "plait.ui.cmd_view",
        "Print a run as OpenTelemetry spans (JSON, one per line) with GenAI token usage; needs the otel extra.",
    ),
    "integrate": Entry(
        "plait.ui.cmd_integrate",
        "Merge BRANCHes onto a new, verified integration branch; your checkout is not touched.",
    ),
    "apply": Entry(
        "plait.ui.cmd_integrate",
        "Bring a run's verified result into your current branch (fast-forward, else a merge commit; --squash: one"
        " commit). The commits made here are yours (git's user.name and user.email).",
    ),
    "sandbox": Entry(
        "plait.ui.cmd_policy",
        "Probe the OS sandbox layers that work here and say which one agents' commands get.",
    ),
    "ask": Entry("plait.ui.cmd_session", "Ask read-only investigators, one per area of the code; get one answer."),
    "session": Entry("plait.ui.cmd_session", "Talk with a lead agent that keeps helpers and dispatches changes."),
    "trust": Entry(
        "plait.ui.cmd_trust",
        "Trust a repository with its own .plait.toml: a sandbox, limits, keys and model servers it sets are obeyed.",
    ),
    "mcp": Entry("plait.ui.cmd_mcp", "Serve this repository's runs to another agent over MCP (stdio or HTTP)."),
    "review": Entry(
        "plait.ui.cmd_review",
        "Review a run task by task: its change against the base and the integration head, its summary, cost,"
        " the merge rung that placed it and the gate's verdict. Every task is kept unless you --drop it.",
    ),
    "pr": Entry(
        "plait.ui.cmd_pr",
        "Push a run's verified result and open a pull request for it (with `gh`, else print where to open one).",
    ),
    "agent": Entry(
        "plait.ui.cmd_agent",
        "Step into one agent of a run: tell it something, pause, resume or stop it, or look at its worktree.",
    ),
    "init": Entry(
        "plait.ui.cmd_init",
        "Write a commented .plait.toml for this repository: its test command and a model for your API key.",
    ),
    "policy": Entry("plait.ui.cmd_policy", "The permission policy for agents' commands."),
    "bench": Entry("plait.ui.cmd_bench", "Measure plait on real history."),
}


def load_command(name: str) -> _click.Command:
    """The full command `name`, built from its module (whose `register` adds its commands to a Typer app)."""
    module = import_module(COMMANDS[name].module)
    own = typer.Typer(rich_markup_mode="rich")
    module.register(own)
    return typer.main.get_group(own).commands[name]


class _LazyGroup(TyperGroup):
    """The root group: a command not defined here stands as a stub with its help line until it is resolved."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.stubs = {name for name in COMMANDS if name not in self.commands}
        for name in self.stubs:
            self.commands[name] = TyperCommand(name, short_help=COMMANDS[name].help, help=COMMANDS[name].help)

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return list(COMMANDS) + [n for n in self.commands if n not in COMMANDS]

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name in self.stubs:
            self.commands[name] = load_command(name)
            self.stubs.discard(name)
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        from plait.ui._root_help import render_root_help

        render_root_help(console(), self, ctx, {name: entry.help for name, entry in COMMANDS.items()})


app = typer.Typer(
    cls=_LazyGroup,
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
    from plait.ui.summary import summarize

    return [summarize(run_id, store.events(run_id)) for run_id in store.run_ids()]


@app.command()
def runs(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """List the runs of this repository, newest last."""
    import json

    from rich.table import Table

    from plait.settings import load_settings
    from plait.ui._common import has_log, open_store
    from plait.ui._safe import escaped
    from plait.ui.feed import make_redactor
    from plait.workspace import Repo

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
    from plait.settings import load_settings
    from plait.ui._common import open_store, resolve_run
    from plait.ui.feed import make_redactor, redact_event
    from plait.ui.summary import summarize
    from plait.ui.transcript import render_transcript
    from plait.workspace import Repo

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
    import json

    from rich.table import Table

    from plait.settings import settings_to_show
    from plait.ui._safe import escaped
    from plait.ui.cmd_init import detected_verify
    from plait.workspace import Repo

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


def _exit_code(code: object) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    err.print(escape(visible(str(code))), highlight=False)  # `sys.exit("why")` prints why and exits 1
    return 1


def main(argv: list[str] | None = None) -> int:
    """Run `plait` with `argv` (the process's arguments by default) and return its exit code: expected failures
    are one line on stderr and an exit code, never a traceback."""
    try:
        app(args=argv, prog_name="plait")  # `python -m plait` too: its help and shell completion name the command
    except SystemExit as exc:
        return _exit_code(exc.code)
    except PlaitError as exc:
        err.print(f"[red]plait: error:[/] {escape(visible(str(exc)))}", highlight=False, soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        return 130
    return 0
