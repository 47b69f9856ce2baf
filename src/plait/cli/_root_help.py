"""The top-level `plait --help`, drawn with rich's console, table and panel alone.

typer's own help renderer imports its whole rich toolkit (markdown, syntax, tracebacks), which costs more than
the rest of `plait --help`; a command's help still goes through typer. The root's options are drawn from rows
(long names, short names, metavar, help): typer's parameters give them, or the static `ROOT_OPTIONS` when
`plait --help` starts without typer (a test keeps the two drawings equal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported to draw: the typer commands read the root's help text from here
    from rich.console import Console
    from rich.table import Table
    from typer import _click

__all__ = ["ROOT_HELP", "ROOT_OPTIONS", "ROOT_USAGE", "OptionRow", "option_rows", "render_root_help"]

OptionRow = tuple[str, str, str, str]
"""An option as the help shows it: its long names, its short names, its metavar and its help."""

ROOT_USAGE = "Usage: plait [OPTIONS] COMMAND [ARGS]..."
ROOT_HELP = "Run LLM coding agents in isolated git worktrees and weave their work into one tested result."
ROOT_OPTIONS: tuple[OptionRow, ...] = (
    ("--version", "", "", "Print the version and exit."),
    (
        "",
        "-C",
        "DIR",
        "Run as if plait was started in DIR (as git -C does); a command's own --repo is taken from there.",
    ),
    ("--install-completion", "", "", "Install completion for the current shell."),
    (
        "--show-completion",
        "",
        "",
        "Show completion for the current shell, to copy it or customize the installation.",
    ),
    ("--help", "-h", "", "Show this message and exit."),
)


def _grid() -> Table:
    from rich.table import Table

    return Table(show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))


def option_rows(group: _click.Command, ctx: _click.Context) -> list[OptionRow]:
    """The rows of `group`'s visible options."""
    rows = []
    for param in group.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        opts = [*param.opts, *param.secondary_opts]
        long = ",".join(o for o in opts if o.startswith("--"))
        short = ",".join(o for o in opts if not o.startswith("--"))
        metavar = "" if getattr(param, "is_flag", False) else (param.metavar or "")
        rows.append((long, short, metavar, getattr(param, "help", None) or ""))
    return rows


def render_root_help(
    console: Console, usage: str, help: str, options: list[OptionRow] | tuple[OptionRow, ...], commands: dict[str, str]
) -> None:
    """Print `usage`, `help`, the `options` and `commands` (name to help line) as typer lays them out."""
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.text import Text

    console.print(Padding(Text(usage.strip()), 1), style="bold")
    if help:
        console.print(Padding(Text(help.strip()), (0, 1, 1, 1)))
    table = _grid()
    for long, short, metavar, text in options:
        table.add_row(
            Text(long, style="bold cyan"),
            Text(short, style="bold green"),
            Text(metavar, style="bold yellow"),
            Text(text),
        )
    console.print(Panel(table, border_style="dim", title="Options", title_align="left"))
    table = _grid()
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(ratio=1)
    for name, line in commands.items():
        table.add_row(name, Text(line))
    console.print(Panel(table, border_style="dim", title="Commands", title_align="left"))
