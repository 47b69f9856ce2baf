"""Run an agent's shell command: own session, scrubbed environment, capped output, whole tree killed."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fnmatch
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from plait.workspace._proctree import alive, process_tree, signal_all, tree
from plait.workspace._spawn import Process, spawn

__all__ = [
    "CommandResult",
    "Launch",
    "LocalShell",
    "Shell",
    "Watch",
    "cap_output",
    "process_tree",
    "scrub_env",
]

_SECRET_NAMES = (
    "*_API_KEY",
    "*_TOKEN",
    "*_SECRET*",
    "*PASSWORD*",
    "SSH_AUTH_SOCK",
    "AWS_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_*",
)
_READ_SIZE = 65536


class CommandResult(BaseModel):
    """What a command did. `exit_code` is None when it was killed by a signal (a timeout included)."""

    model_config = ConfigDict(frozen=True)

    exit_code: int | None
    output: str
    """Combined stdout and stderr, head and tail kept when longer than the limit."""
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0


class Shell(Protocol):
    """Runs one shell command in a directory; a sandbox wraps or replaces `LocalShell` behind this."""

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        """Run `command` with bash in `cwd`, killing it and its descendants after `timeout` seconds."""
        ...


@dataclass(frozen=True)
class Launch:
    """How to start a command: the whole argv, its environment as given, and set-up in the child before exec."""

    argv: Sequence[str]
    env: Mapping[str, str]
    preexec_fn: Callable[[], None] | None = None
    pass_fds: Sequence[int] = ()
    reap: Callable[[], None] | None = None
    """Kills what the walk of the process tree cannot find (say, a cgroup's members), right after the tree."""
    started: Callable[[int], Awaitable[None]] | None = None
    """Awaited with the pid as soon as the command has started (one that waits to be let go, say); should it
    raise, the process is killed and the error propagates."""
    contained: bool = False
    """Every process of the command dies with it (a pid namespace): once it has exited, none is left to look for."""
    executor: Executor | None = None
    """Start the command from this executor's thread, so that it starts in that thread's cgroups (see `_spawn`)."""


Watch = Callable[[int], Awaitable[str]]
"""Watches a started command, given its pid; when it returns (a reason), the command's tree is killed."""


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of `env` without credentials, with git prompts and pagers turned off."""
    kept = {k: v for k, v in env.items() if not any(fnmatch.fnmatchcase(k.upper(), p) for p in _SECRET_NAMES)}
    kept.update(GIT_TERMINAL_PROMPT="0", PAGER="cat", GIT_PAGER="cat")
    return kept


def _marker(cut: int) -> str:
    return f"\n[... {cut} characters cut ...]\n"


def _keep(total: int, limit: int) -> int:
    return max(limit - len(_marker(total)), 0)


def cap_output(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its head and tail around a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = _keep(len(text), limit)
    head = keep // 2
    tail = keep - head
    return text[:head] + _marker(len(text) - keep) + (text[-tail:] if tail else "")


class _Capture:
    """Keeps the first and last `limit` characters of a stream, and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        self.total += len(text)
        if self._head_len < self.limit:
            taken = text[: self.limit - self._head_len]
            self._head.append(taken)
            self._head_len += len(taken)
            text = text[len(taken) :]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail and self._tail_len - len(self._tail[0]) >= self.limit:
                self._tail_len -= len(self._tail.popleft())

    def text(self) -> str:
        head, tail = "".join(self._head), "".join(self._tail)
        if self.total == len(head) + len(tail):
            return cap_output(head + tail, self.limit)
        keep = _keep(self.total, self.limit)
        tail_keep = keep - keep // 2
        return head[: keep // 2] + _marker(self.total - keep) + (tail[-tail_keep:] if tail_keep else "")


async def _exited(proc: Process, seconds: float) -> bool:
    """Wait up to `seconds` for the process to exit; False if it is still running."""
    try:
        async with asyncio.timeout(seconds):  # not wait_for: on 3.11 it can swallow a cancellation (a Ctrl-C)
            await proc.wait()
    except TimeoutError:
        return False
    return True


async def _wait(proc: Process, seconds: float, watch: Watch | None) -> tuple[bool, bool]:
    """(ended by itself, stopped by the watch) after waiting up to `seconds`."""
    if watch is None:
        return await _exited(proc, seconds), False
    watcher = asyncio.ensure_future(watch(proc.pid))
    try:
        ended = await _exited_or(proc, seconds, watcher)
        stopped = not ended and watcher.done()
        if stopped:
            watcher.result()  # a failing watch raises here, not as an unretrieved exception
    finally:
        await _reap(watcher)
    return ended, stopped


async def _reap(helper: asyncio.Future[Any]) -> None:
    """Cancel a helper task and wait for it, without swallowing a cancellation of the caller itself.

    A bare `suppress(CancelledError)` around the wait would also eat a Ctrl-C that lands in that
    moment, and the run would go on as if it had never been asked to stop.
    """
    helper.cancel()
    try:
        await helper
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise


async def _exited_or(proc: Process, seconds: float, other: asyncio.Future[str]) -> bool:
    """Wait up to `seconds` for the process to exit or `other` to finish; True if the process exited."""
    waiter: asyncio.Future[Any] = asyncio.ensure_future(proc.wait())
    try:
        await asyncio.wait({waiter, other}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        await _reap(waiter)
    return proc.returncode is not None


async def _kill_tree(proc: Process, grace: float, *, contained: bool = False) -> None:
    """SIGTERM the process tree, wait up to `grace` seconds, then SIGKILL what is left.

    With no grace the group is killed first, before the walk of /proc: a fork bomb must not outgrow the walk.
    A `contained` command that has exited left nothing: /proc is not walked at all.
    """
    if contained and proc.returncode is not None:
        return
    if grace <= 0:
        signal_all(proc.pid, {}, signal.SIGKILL)
    pids = tree(proc.pid)
    if proc.returncode is not None and not pids:
        return
    signal_all(proc.pid, pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        await _exited(proc, 0.05)
        await asyncio.sleep(0.01)
        pids = {p: s for p, s in pids.items() if p != proc.pid and alive(p, s)}
        if proc.returncode is not None and not pids and not tree(proc.pid):
            return
    signal_all(proc.pid, {**pids, **tree(proc.pid)}, signal.SIGKILL)
    await _exited(proc, 1.0)


async def _started(proc: Process, hook: Callable[[int], Awaitable[None]], read_fd: int) -> None:
    """Run the launch's `started` hook; if it fails, the process is killed and reaped before the error goes on."""
    try:
        await hook(proc.pid)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        try:
            await proc.wait()
        finally:
            os.close(read_fd)
        raise


async def _drain(reader: asyncio.Future[None], capture: _Capture, idle: float) -> None:
    """Read what is left until EOF, giving up once nothing came for `idle` seconds (or after 10 such windows).

    Output ends at EOF unless a descendant that escaped the kill still holds the pipe.
    """
    for _ in range(10):
        seen = capture.total
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(idle):
                await asyncio.shield(reader)
        if reader.done() or capture.total == seen:
            return


async def _pump(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while chunk := await stream.read(_READ_SIZE):
        capture.feed(chunk)
    capture.feed(b"", final=True)


class LocalShell:
    """Runs commands directly on this machine, with no sandbox: `bash -c` in a new session."""

    def __init__(self, *, env: Mapping[str, str] | None = None, grace: float = 2.0, drain: float = 1.0) -> None:
        """`env` defaults to this process's environment at run time; credentials are always scrubbed from it.

        `grace` is how long a process tree gets between SIGTERM and SIGKILL; `drain` how long output is
        still read after the command ended, from descendants it left behind.
        """
        self._env = env
        self._grace = grace
        self._drain = drain

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        """Run `command`; when it ends or times out, its leftover background processes are killed too."""
        env = scrub_env(os.environ if self._env is None else self._env)
        return await self.launch(
            Launch(("bash", "-c", command), env), cwd=cwd, timeout=timeout, output_limit=output_limit
        )

    async def launch(
        self,
        spec: Launch,
        *,
        cwd: Path,
        timeout: float,  # noqa: ASYNC109
        output_limit: int,
        watch: Watch | None = None,
    ) -> CommandResult:
        """Start `spec` in a new session and collect its output, like `run`; `spec.env` is used as given.

        `watch`, if given, is started with the pid; should it return, the process tree is killed at once, with no
        grace (the result is not marked timed out).
        """
        started = time.monotonic()
        capture = _Capture(output_limit)
        # Our own pipe, not asyncio's: a descendant that escaped the kill may hold it open, and we must be
        # able to stop reading and close it; `Process.wait()` would also wait for asyncio's pipes to close.
        read_fd, write_fd = os.pipe()
        options: dict[str, Any] = {
            "env": dict(spec.env),
            "stdin": subprocess.DEVNULL,
            "stdout": write_fd,
            "stderr": subprocess.STDOUT,
            "start_new_session": True,
            "preexec_fn": spec.preexec_fn,
            "pass_fds": tuple(spec.pass_fds),
        }
        try:
            proc: Process
            if spec.executor is not None:
                proc = await spawn(spec.executor, spec.argv, cwd=cwd, **options)
            else:
                proc = await asyncio.create_subprocess_exec(*spec.argv, cwd=cwd, **options)
        except OSError:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        if spec.started is not None:
            await _started(proc, spec.started, read_fd)
        stream = asyncio.StreamReader()
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(read_fd, "rb", buffering=0)
        )
        reader = asyncio.ensure_future(_pump(stream, capture))
        timed_out = False
        try:
            ended, stopped = await _wait(proc, timeout, watch)
            timed_out = not ended and not stopped
            grace = 0.0 if stopped else self._grace if timed_out else 0.2
            await _kill_tree(proc, grace, contained=spec.contained)
            if spec.reap is not None:
                spec.reap()
            await _drain(reader, capture, self._drain)
        finally:
            if proc.returncode is None:
                signal_all(proc.pid, tree(proc.pid), signal.SIGKILL)
            await _reap(reader)
            transport.close()
        code = proc.returncode
        return CommandResult(
            exit_code=None if timed_out or code is None or code < 0 else code,
            output=capture.text(),
            timed_out=timed_out,
            truncated=capture.total > output_limit,
            duration_s=round(time.monotonic() - started, 3),
        )
