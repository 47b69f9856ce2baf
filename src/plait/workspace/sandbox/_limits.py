"""Resource limits for a command's processes (set in its child before exec, or on a process started blocked), and
root's capabilities dropped in the child."""

from __future__ import annotations

import ctypes
import os
import resource
from pathlib import Path

from plait.sandbox_settings import Limits

__all__ = ["CapabilityDrop", "apply_rlimits", "prlimits", "rlimits", "system_tasks"]

_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL = 24, 47, 4
_CAP_VERSION_3 = 0x20080522
_MB = 1 << 20


def system_tasks() -> int:
    """Threads on the whole machine (from /proc/loadavg), an upper bound on any one user's."""
    try:
        return int(Path("/proc/loadavg").read_text().split()[3].split("/")[1])
    except (OSError, IndexError, ValueError):
        return 4096


def rlimits(limits: Limits, *, root: bool) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for each of a command's processes, each capped by this process's own hard limit.

    RLIMIT_DATA is a backstop per process: the agent's memory cgroup, where there is one, bounds all its processes
    together.

    RLIMIT_NPROC counts all of a user's threads, not the command's, so it is set above what already runs; it does
    not bind root at all, which the pids cgroup or the watchdog covers.
    """
    wanted = [
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5),
        (resource.RLIMIT_DATA, limits.memory_mb * _MB, limits.memory_mb * _MB),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * _MB, limits.file_size_mb * _MB),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
    ]
    if not root:
        count = system_tasks() + limits.processes
        wanted.append((resource.RLIMIT_NPROC, count, count))
    table = []
    for kind, soft, hard in wanted:
        _, current = resource.getrlimit(kind)
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        table.append((kind, soft, hard))
    return table


def apply_rlimits(table: list[tuple[int, int, int]]) -> None:
    """Set the limits on this process (a child about to exec); they are inherited by all it starts."""
    for kind, soft, hard in table:
        resource.setrlimit(kind, (soft, hard))


def prlimits(pid: int, table: list[tuple[int, int, int]]) -> None:
    """Set the limits on the process `pid` (one that waits to be let go); raises OSError if it cannot."""
    for kind, soft, hard in table:
        resource.prlimit(pid, kind, (soft, hard))


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class CapabilityDrop:
    """Takes every capability from a child running as root, for good: what it execs gets none either."""

    def __init__(self) -> None:
        try:
            self._last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
        except (OSError, ValueError):
            self._last = 40
        libc = ctypes.CDLL(None, use_errno=True)
        self._prctl = libc.prctl
        self._capset = libc.capset
        self._header = _CapHeader(_CAP_VERSION_3, 0)
        self._data = (_CapData * 2)()

    def __call__(self) -> None:
        """Empty the bounding, ambient, effective, permitted and inheritable sets (in the child, before exec)."""
        for cap in range(self._last + 1):
            self._prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        self._prctl(_PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL, 0, 0, 0)
        if self._capset(ctypes.byref(self._header), self._data) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"capset: {os.strerror(errno)}")
