"""Run an external agent's command through the task's runner, reading its output as it is written.

The command runs in the worktree; its files (prompt, environment, output) are in `.plait-agent/`, which ignores
itself (a `.gitignore` of `*`) and is removed before plait commits the worktree. Cancelling the command (a spent
budget, Ctrl-C) kills its whole process tree: the runner's own clean-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from plait.agent.external._job import Job
from plait.workspace import CommandResult

__all__ = ["DIR", "Files", "error_tail", "run_watched"]

DIR = ".plait-agent"
_POLL_S = 0.2
_REAP_S = 0.5


class Files:
    """The agent's files in its worktree: written before the command starts, removed after."""

    def __init__(self, worktree: Path) -> None:
        self.dir = worktree / DIR
        self.dir.mkdir(exist_ok=True)
        (self.dir / ".gitignore").write_text("*\n")
        self.out = self.dir / "out.jsonl"
        self.err = self.dir / "err.txt"
        for path in (self.out, self.err):
            path.write_text("")

    def write(self, name: str, text: str) -> str:
        """Write `name` (private to the user), returning its path relative to the worktree."""
        path = self.dir / name
        path.write_text(text)
        path.chmod(0o600)
        return f"{DIR}/{name}"

    def env_prefix(self, env: Mapping[str, str]) -> str:
        """Shell that exports `env` from a file, so neither the command line nor the log holds a key."""
        if not env:
            return ""
        lines = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        return f". {self.write('env.sh', lines)} && "

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


async def run_watched(
    job: Job,
    command: str,
    files: Files,
    on_line: Callable[[str], None],
    spent: Callable[[], str],
    after: Callable[[], Awaitable[None]] | None = None,
) -> tuple[CommandResult | None, str]:
    """Run `command` (its stdout into `files.out`), handing each line to `on_line` as it comes, then awaiting
    `after` (a checkpoint of what the lines did).

    Returns the command's result, or None and why when `spent` said the budget is spent (the command was killed).
    """
    redirected = f"{command} > {DIR}/out.jsonl 2> {DIR}/err.txt"
    running = asyncio.ensure_future(
        job.runner.run(redirected, cwd=job.worktree, timeout=job.wall_s, output_limit=job.output_limit)
    )
    offset, pending = 0, ""
    why = ""
    try:
        while True:
            done = running.done()
            offset, pending = _read(files.out, offset, pending, on_line)
            if after is not None:
                await after()
            why = spent()
            if done or why:
                break
            await asyncio.wait({running}, timeout=_POLL_S)
    finally:
        if not running.done():
            running.cancel()  # the runner kills the process tree
            with contextlib.suppress(asyncio.CancelledError):
                await running
            await asyncio.sleep(_REAP_S)  # the runner killed the tree unwaited: let the loop's child watcher reap it
    if why:
        return None, why
    if pending.strip():
        on_line(pending)
    if after is not None:
        await after()
    return running.result(), ""


def _read(path: Path, offset: int, pending: str, on_line: Callable[[str], None]) -> tuple[int, str]:
    """Hand the complete lines written since `offset` to `on_line`; returns the new offset and the partial line."""
    try:
        with path.open("rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return offset, pending
    if not data:
        return offset, pending
    text = pending + data.decode("utf-8", errors="replace")
    *lines, rest = text.split("\n")
    for line in lines:
        if line.strip():
            on_line(line)
    return offset + len(data), rest


def error_tail(files: Files, result: CommandResult | None, limit: int = 2000) -> str:
    """The end of what the command wrote to stderr (or its runner's words), for a failure's summary."""
    try:
        text = files.err.read_text(errors="replace").strip()
    except OSError:
        text = ""
    text = text or (result.output.strip() if result is not None else "")
    return text[-limit:] if len(text) > limit else text
