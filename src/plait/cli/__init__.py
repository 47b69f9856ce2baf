"""The `plait` command line: the commands that wire the packages below (a run, the reconciler, the MCP server)
to a terminal, rendering with `plait.ui`.

`main(argv)` runs one command line in this process and returns its exit code. Every command is registered in
one table, `plait.cli._commands.COMMANDS`, and its module imported only when that command runs (or shows its own
help). The read-only commands start without typer when their options are plain (`plait.cli._fast`); everything
else, and whatever that start does not recognise, goes through typer (`plait.cli._app`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from plait.errors import PlaitError

__all__ = ["main"]

_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGCHLD") if hasattr(signal, name)
)


def main(argv: Sequence[str] | None = None, *, fast: bool = True) -> int:
    """Run `plait` with `argv` (the process's arguments by default) and return its exit code: expected failures
    are one line on stderr and an exit code, never a traceback. `fast=False` parses every command with typer.

    It never exits the interpreter, and leaves the process as it found it: the working directory, the
    environment, the signal handlers, the logging handlers and `sys.stdout`/`sys.stderr`.
    """
    from plait.cli._argv import COMMAND_LINE

    args = None if argv is None else list(argv)
    running = COMMAND_LINE.set(tuple(sys.argv[1:] if args is None else args))
    try:
        with _restored():
            return _exit_code(lambda: _main(args, fast=fast))
    finally:
        COMMAND_LINE.reset(running)


def _main(argv: list[str] | None, *, fast: bool) -> int:
    reading = sys.modules.get("plait.ui._reading")
    if reading is not None:  # an earlier call made its consoles: made again as this call's environment says
        reading.renew_consoles()
    from plait.cli._fast import start

    code = start(argv) if fast else None
    if code is not None:
        return code
    import typer
    from typer import _click, rich_utils

    from plait.cli._app import app

    # typer reads these once, when first imported: this call's environment decides them, not the first call's
    forced = any(os.environ.get(name) for name in ("GITHUB_ACTIONS", "FORCE_COLOR", "PY_COLORS"))
    rich_utils.FORCE_TERMINAL = False if os.environ.get("_TYPER_FORCE_DISABLE_TERMINAL") else True if forced else None
    width = os.environ.get("TERMINAL_WIDTH", "")
    rich_utils.MAX_WIDTH = int(width) if width.isdigit() else None
    try:  # `python -m plait` too: its help and shell completion name the command
        code = app(args=argv, prog_name="plait", standalone_mode=False)
    except _click.ClickException as exc:  # shown as typer shows it when it exits by itself
        rich_utils.rich_format_error(exc)
        return exc.exit_code
    except typer.Abort:
        rich_utils.rich_abort_error()
        return 1
    return code if isinstance(code, int) else 0


def _exit_code(run: Callable[[], int]) -> int:
    """What `run` returns, or the exit code of how it failed: one line on stderr, never a traceback."""
    try:
        return run()
    except SystemExit as exc:
        return _exit_status(exc.code)
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


def _exit_status(code: object) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    from rich.markup import escape

    from plait.textsafe import visible
    from plait.ui._reading import err

    err.print(escape(visible(str(code))), highlight=False)  # `sys.exit("why")` prints why and exits 1
    return 1


@contextlib.contextmanager
def _restored() -> Iterator[None]:
    """Put back, at the end, the working directory (`-C`), the environment, the signal handlers, the root
    logger's handlers and the standard streams as they were."""
    try:
        cwd: Path | None = Path.cwd()
    except OSError:  # it was removed: there is nothing to come back to
        cwd = None
    env = dict(os.environ)
    handlers = {s: signal.getsignal(s) for s in _SIGNALS}
    logged = _root_logger()
    streams = sys.stdout, sys.stderr, sys.stdin
    try:
        yield
    finally:
        if sys.stdout is not streams[0]:  # typer swapped it when the reader left: keep the exit quiet as it does
            _quiet_stdout(streams[0])
        sys.stdout, sys.stderr, sys.stdin = streams
        if "logging" in sys.modules:
            root = sys.modules["logging"].getLogger()
            root.handlers[:] = logged[0]
            root.setLevel(logged[1])
        for number, handler in handlers.items():
            if handler is not None and signal.getsignal(number) is not handler:
                with contextlib.suppress(ValueError):  # only the main thread sets handlers, and only it changed them
                    signal.signal(number, handler)
        for key in set(os.environ) - set(env):
            del os.environ[key]
        os.environ.update({k: v for k, v in env.items() if os.environ.get(k) != v})
        if cwd is not None:
            with contextlib.suppress(OSError):  # it was removed meanwhile
                os.chdir(cwd)


def _root_logger() -> tuple[list[Any], int]:
    """The root logger's handlers and level, without importing logging when nothing has (its defaults then)."""
    logging = sys.modules.get("logging")
    if logging is None:
        return [], 30  # WARNING, the root logger's level until someone sets another
    root = logging.getLogger()
    return list(root.handlers), root.level


def _quiet_stdout(stdout: Any = None) -> None:
    """Point stdout at /dev/null, so that the interpreter's own flush at exit meets no closed pipe either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (stdout or sys.stdout).fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
