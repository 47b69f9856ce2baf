"""The top-level `plait --help`, drawn with rich's console, table and panel alone.

typer's own help renderer imports its whole rich toolkit (markdown, syntax, tracebacks), which costs more than
the rest of `plait --help`; a command's help still goes through typer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console
    from typer import _click

__all__ = ["render_root_help"]


def _grid() -> Table:
    return Table(show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))


def _options(group: _click.Command, ctx: _click.Context) -> Table:
    table = _grid()
    for param in group.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        opts = [*param.opts, *param.secondary_opts]
        long = ",".join(o for o in opts if o.startswith("--"))
        short = ",".join(o for o in opts if not o.startswith("--"))
        metavar = "" if getattr(param, "is_flag", False) else (param.metavar or "")
        table.add_row(
            Text(long, style="bold cyan"),
            Text(short, style="bold green"),
            Text(metavar, style="bold yellow"),
            Text(getattr(param, "help", None) or ""),
        )
    return table


def render_root_help(console: Console, group: _click.Command, ctx: _click.Context, commands: dict[str, str]) -> None:
    """Print the usage, `group`'s help, its options and `commands` (name to help line) as typer lays them out."""
    console.print(Padding(Text(group.get_usage(ctx).strip()), 1), style="bold")
    if group.help:
        console.print(Padding(Text(group.help.strip()), (0, 1, 1, 1)))
    console.print(Panel(_options(group, ctx), border_style="dim", title="Options", title_align="left"))
    table = _grid()
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(ratio=1)
    for name, line in commands.items():
        table.add_row(name, Text(line))
    console.print(Panel(table, border_style="dim", title="Commands", title_align="left"))
