"""Starting a command from a given thread, so that it starts in that thread's cgroups (cgroup v1 places threads
one by one), and waiting for it through a pidfd on the event loop instead of asyncio's child watcher."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Protocol, cast

__all__ = ["PidfdProcess", "Process", "can_spawn_from_threads", "spawn"]


class Process(Protocol):
    """What the runner needs of a started command: asyncio's `Process` and `PidfdProcess` both have it."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def kill(self) -> None: ...


def can_spawn_from_threads() -> bool:
    """Whether `spawn` works here (Linux 5.3+, for pidfds)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class PidfdProcess:
    """A child started with `subprocess.Popen`, reaped when its pidfd turns readable on the running loop."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.returncode: int | None = None
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = self._loop.create_future()
        self._pidfd: int | None = os.pidfd_open(popen.pid)
        self._loop.add_reader(self._pidfd, self._reap)

    def _reap(self) -> None:
        code = self._popen.poll()
        if code is None or self._pidfd is None:
            return
        self.returncode = code
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        if not self._exited.done():
            self._exited.set_result(code)

    async def wait(self) -> int:
        """The exit status (minus the signal number if a signal ended it), once the process has exited."""
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        """SIGKILL the process, through its pidfd: never another process that reused its pid."""
        if self._pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)


async def spawn(executor: Executor, argv: Sequence[str], *, cwd: Path, **popen: Any) -> PidfdProcess:
    """Start `argv` with `subprocess.Popen` on the executor's thread (so in that thread's cgroups)."""

    def start() -> subprocess.Popen[bytes]:
        return cast("subprocess.Popen[bytes]", subprocess.Popen(list(argv), cwd=cwd, **popen))

    return PidfdProcess(await asyncio.get_running_loop().run_in_executor(executor, start))
