"""The command line `plait.cli.main` is running, for the one command that starts it again in the background
(`plait run --detach`): set for the length of one call, not read from `sys.argv`, which in a process that calls
`main(argv)` itself is that process's own."""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["COMMAND_LINE"]

COMMAND_LINE: ContextVar[tuple[str, ...]] = ContextVar("plait_command_line", default=())
"""The arguments of the `plait` command line being run (without the program's name)."""
