"""The `plait` command line.

The top-level help lists every command from `COMMANDS`, a static table; a command's module is imported only when
that command runs (or shows its own help), so `plait runs` does not pay for `plait run`'s imports. The read-only
commands start without typer when their options are plain (`plait.ui._fast`); everything else, and whatever
that start does not recognise, goes through typer (`plait.ui._app`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from plait.errors import PlaitError

if TYPE_CHECKING:
    from plait.ui._app import app, load_command

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


def __getattr__(name: str) -> Any:
    """`app` and `load_command` are typer's, imported when asked for."""
    if name in ("app", "load_command"):
        from plait.ui import _app

        return getattr(_app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        from plait.ui._fast import start

        code = start(argv) if fast else None
        if code is not None:
            return code
        from plait.ui._app import app

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
