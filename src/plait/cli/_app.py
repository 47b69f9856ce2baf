"""The `plait` command line as typer parses it: the root group, its options, and each command built from its
entry in `plait.cli._commands.COMMANDS` when it is used.

The read-only commands usually start without it (`plait.cli._fast`); what that start does not recognise comes here.
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from plait import __version__
from plait.cli._commands import COMMANDS
from plait.cli._root_help import ROOT_HELP
from plait.errors import EnvironmentProblem
from plait.ui._reading import console, out

if TYPE_CHECKING:
    from typer import _click

__all__ = ["app", "load_command"]


def load_command(name: str) -> _click.Command:
    """The full command `name`, built from its entry in the table: its module's function, or a group of them."""
    entry = COMMANDS[name]
    module = import_module(entry.module)
    own = typer.Typer(rich_markup_mode="rich")
    if entry.subcommands:
        group = typer.Typer(help=entry.help, no_args_is_help=True)
        for sub in entry.subcommands:
            group.command(sub)(getattr(module, sub))
        own.add_typer(group, name=name)
    else:
        own.command(name)(getattr(module, entry.function or name))
    return typer.main.get_group(own).commands[name]


class _LazyGroup(TyperGroup):
    """The root group: each command stands as a stub with its help line until it is resolved."""

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
        from plait.cli._root_help import option_rows, render_root_help

        commands = {name: entry.help for name, entry in COMMANDS.items()}
        render_root_help(console(), self.get_usage(ctx), self.help or "", option_rows(self, ctx), commands)


def _version(value: bool) -> None:
    if value:
        out.print(f"plait {__version__}")
        raise typer.Exit()


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


app = typer.Typer(
    cls=_LazyGroup,
    help=ROOT_HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
"""The root `plait` group: its options are `_root`'s, its commands the table's."""
app.callback()(_root)
