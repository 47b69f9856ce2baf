"""The `plait` command line as typer parses it: the root group, whose commands are imported as they are used,
and the commands `runs`, `show` and `config`.

The read-only commands usually start without it (`plait.ui._fast`); what that start does not recognise comes here.
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from plait import __version__
from plait.errors import EnvironmentProblem, UsageError
from plait.ui._common import JsonOpt, RepoOpt, console, err, out
from plait.ui._root_help import ROOT_HELP
from plait.ui.cli import COMMANDS

if TYPE_CHECKING:
    from typer import _click

__all__ = ["app", "load_command"]


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
        from plait.ui._root_help import option_rows, render_root_help

        commands = {name: entry.help for name, entry in COMMANDS.items()}
        render_root_help(console(), self.get_usage(ctx), self.help or "", option_rows(self, ctx), commands)


app = typer.Typer(
    cls=_LazyGroup,
    help=ROOT_HELP,
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


@app.command()
def runs(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """List the runs of this repository, newest last."""
    from plait.ui._runs import list_runs

    list_runs(repo_path, as_json)


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
    from plait.ui._runs import show_run

    show_run(run_ref, task, repo_path, full=full, no_pager=no_pager, as_json=as_json)


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
