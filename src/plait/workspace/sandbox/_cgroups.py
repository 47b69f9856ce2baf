"""An agent's cgroups: the memory and the processes of all its commands bounded together, and each command's own
processes found and killed where no pid namespace does it.

    <pids parent>/plait-<plait's pid>-<id>/              pids.max: every process of the agent
    <pids parent>/plait-<plait's pid>-<id>/command-<id>/ one command's processes, when it has no pid namespace
    <memory parent>/plait-<plait's pid>-<id>/            memory limit: every process of the agent

With cgroup v2 both parents may be one directory, and so is the agent's; v1 has one hierarchy per controller.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

from plait.workspace._spawn import can_spawn_from_threads

__all__ = ["AgentCgroups", "Cgroup"]

_MB = 1 << 20


class Cgroup:
    """One cgroup directory: processes join it, and it can kill and list them, then be removed."""

    def __init__(self, path: Path) -> None:
        """Create it; raises OSError when the cgroup file system refuses."""
        self.path = path
        path.mkdir()
        fds: list[int] = []
        try:
            fds.append(os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
            # v1 moves the calling thread alone through `tasks`, without the lock that makes a process move wait
            # for an RCU grace period (milliseconds); a child about to exec has a single thread
            if (path / "tasks").exists():
                fds.append(os.open(path / "tasks", os.O_WRONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            path.rmdir()
            raise
        self._procs_fd, self._join_fd = fds[0], fds[-1]

    def join(self) -> None:
        """Move the calling process in (a child before exec, with one thread: all it starts stays inside)."""
        os.write(self._join_fd, b"0")

    def add(self, pid: int) -> None:
        """Move the process `pid` in; raises OSError if it cannot be moved."""
        os.write(self._procs_fd, str(pid).encode())

    def read(self, name: str) -> str:
        """The text of one of its files, "" when it cannot be read."""
        try:
            return (self.path / name).read_text()
        except OSError:
            return ""

    def count(self, name: str, key: str) -> int:
        """The number after `key` in a flat-keyed file such as pids.events or memory.events."""
        for line in self.read(name).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
                return int(parts[1])
        return 0

    def pids(self) -> list[int]:
        """Processes in the cgroup now, but plait itself (one of its threads may be inside, see `spawner`)."""
        try:
            return [int(p) for p in self.read("cgroup.procs").split() if int(p) != os.getpid()]
        except ValueError:
            return []

    def kill(self) -> None:
        """SIGKILL everything in the cgroup, including processes that left the command's session."""
        kill_file = self.path / "cgroup.kill"
        if kill_file.exists():
            with contextlib.suppress(OSError):
                kill_file.write_text("1")
                return
        for _ in range(100):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self, wait: float = 2.0) -> bool:
        """Kill what is left and remove the cgroup once its processes are reaped (waiting up to `wait` seconds);
        False if it stays."""
        for fd in {self._procs_fd, self._join_fd}:
            with contextlib.suppress(OSError):
                os.close(fd)
        deadline = time.monotonic() + wait
        pause = 0.0005
        while True:
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                self.kill()
                time.sleep(pause)
                pause = min(pause * 2, 0.05)


def _limit_memory(group: Cgroup, megabytes: int) -> None:
    """Cap the group's memory (and swap: v2 none, v1 memory plus swap at the same cap)."""
    value = str(megabytes * _MB)
    if (group.path / "memory.max").exists():
        (group.path / "memory.max").write_text(value)
        if (group.path / "memory.swap.max").exists():
            (group.path / "memory.swap.max").write_text("0")
        return
    (group.path / "memory.limit_in_bytes").write_text(value)
    if (group.path / "memory.memsw.limit_in_bytes").exists():  # only where swap accounting is on
        (group.path / "memory.memsw.limit_in_bytes").write_text(value)


def _enter_thread(groups: list[Cgroup]) -> None:
    """Move the calling thread (only it) into each of the v1 cgroups."""
    for group in groups:
        (group.path / "tasks").write_text("0")


class AgentCgroups:
    """The cgroups of one agent, made when its runner starts and removed when it closes."""

    def __init__(self, *, pids_parent: Path | None, memory_parent: Path | None, processes: int, memory_mb: int):
        """Make what the parents allow; what could not be made is None (and the per-process limits remain)."""
        name = f"plait-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self._spawner: ThreadPoolExecutor | None = None
        self._spawner_tried = False
        self.pids: Cgroup | None = None
        self.memory: Cgroup | None = None
        if pids_parent is not None:
            with contextlib.suppress(OSError):
                self.pids = self._make(pids_parent / name, lambda g: (g.path / "pids.max").write_text(str(processes)))
        if memory_parent is not None:
            if self.pids is not None and memory_parent == pids_parent:
                with contextlib.suppress(OSError):
                    _limit_memory(self.pids, memory_mb)
                    self.memory = self.pids
            else:
                with contextlib.suppress(OSError):
                    self.memory = self._make(memory_parent / name, lambda g: _limit_memory(g, memory_mb))

    @staticmethod
    def _make(path: Path, limit: Callable[[Cgroup], object]) -> Cgroup:
        group = Cgroup(path)
        try:
            limit(group)
        except OSError:
            group.remove(0)
            raise
        return group

    def command(self) -> Cgroup | None:
        """A new cgroup for one command's processes, inside the agent's pids cgroup (None without one)."""
        if self.pids is None:
            return None
        try:
            return Cgroup(self.pids.path / f"command-{uuid.uuid4().hex[:10]}")
        except OSError:
            return None

    def refused_forks(self, leaf: Cgroup | None = None) -> int:
        """Forks refused at the pids limit so far (v1 counts them where the fork was tried, v2 where the limit is)."""
        groups = [g for g in (self.pids, leaf) if g is not None]
        return sum(g.count("pids.events", "max") for g in groups)

    def oom_kills(self) -> int:
        """Processes the kernel killed because the agent's memory was full, so far."""
        if self.memory is None:
            return 0
        if (self.memory.path / "memory.events").exists():
            return self.memory.count("memory.events", "oom_kill")
        return self.memory.count("memory.oom_control", "oom_kill")

    def joins(self, leaf: Cgroup | None) -> list[Cgroup]:
        """The cgroups a command's first process enters: its own (or the agent's pids cgroup), and the memory one
        unless that is the same hierarchy (v2: the command's own cgroup is inside the agent's, limits and all)."""
        first = leaf or self.pids
        out = [first] if first is not None else []
        if self.memory is not None and self.memory is not self.pids:
            out.append(self.memory)
        return out

    def spawner(self) -> Executor | None:
        """A thread of plait inside the agent's cgroups, from which commands start inside them already: no process
        is moved per command, and a move can cost milliseconds (an RCU grace period). Only cgroup v1 places threads
        one by one; None elsewhere. The kernel's OOM killer passes over such a thread (it is not a group leader)."""
        if not self._spawner_tried:
            self._spawner_tried = True
            groups = self.joins(None)
            if groups and all((g.path / "tasks").exists() for g in groups) and can_spawn_from_threads():
                pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plait-spawner")
                try:
                    pool.submit(_enter_thread, groups).result()
                    self._spawner = pool
                except OSError:
                    pool.shutdown()
        return self._spawner

    def close(self) -> None:
        """Kill what is left of the agent's processes and remove its cgroups."""
        if self._spawner is not None:
            self._spawner.shutdown()  # its thread leaves the cgroups as it ends
            self._spawner = None
        for group in {id(g): g for g in (self.pids, self.memory) if g is not None}.values():
            if group is self.pids:
                for leaf in group.path.glob("command-*"):
                    with contextlib.suppress(OSError):
                        leaf.rmdir()
            group.kill()
            group.remove()
        self.pids = self.memory = None
