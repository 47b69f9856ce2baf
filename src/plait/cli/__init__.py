"""The `plait` command line: the commands that wire the packages below (a run, the reconciler, the MCP server)
to a terminal, rendering with `plait.ui`.

Every command is registered in one table, `plait.cli._commands.COMMANDS`, and its module imported only when that
command runs (or shows its own help), so `plait runs` does not pay for `plait run`'s imports. The read-only
commands start without typer when their options are plain (`plait.cli._fast`); everything else, and whatever
that start does not recognise, goes through typer (`plait.cli._app`).
"""

from __future__ import annotations

from plait.errors import PlaitError

__all__ = ["main"]


def _exit_code(code: object) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    from rich.markup import escape

    from plait.textsafe import visible
    from plait.ui._reading import err

    err.print(escape(visible(str(code))), highlight=False)  # `sys.exit("why")` prints why and exits 1
    return 1


def main(argv: list[str] | None = None, *, fast: bool = True) -> int:
    """Run `plait` with `argv` (the process's arguments by default) and return its exit code: expected failures
    are one line on stderr and an exit code, never a traceback. `fast=False` parses every command with typer."""
    try:
        from plait.cli._fast import start

        code = start(argv) if fast else None
        if code is not None:
            return code
        from plait.cli._app import app

        app(args=argv, prog_name="plait")  # `python -m plait` too: its help and shell completion name the command
    except SystemExit as exc:
        return _exit_code(exc.code)
    except PlaitError as exc:
        from rich.markup import escape

        from plait.textsafe import visible
        from plait.ui._reading import err

        err.print(f"[red]plait: error:[/] {escape(visible(str(exc)))}", highlight=False, soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        from plait.ui._reading import err

        err.print("[yellow]interrupted[/]")
        return 130
    except BrokenPipeError:  # `plait runs | head`: the reader left; say nothing, as git and ls do
        _quiet_stdout()
        return 141
    return 0


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's own flush at exit meets no closed pipe either."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
