"""The bytes an agent's commands add to its directories, bounded without walking them after every command.

The file systems' used space is read (one statfs each) as a command runs: its growth bounds the agent's own from
above, unless something else frees space meanwhile. The directories are walked, in a thread, only when that bound
passes the limit, and now and then during a long command (at most a few percent of its time), so space freed
elsewhere cannot hide the agent's growth for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

__all__ = ["DiskBudget"]

_MB = 1 << 20
_PERIOD = 5.0
"""Seconds between two walks during a long command, at the least."""
_SHARE = 50
"""A walk that took t seconds is followed by no other for `_SHARE * t` seconds (2% of the time at most)..."""
_URGENT = 2.0
"""... or for at most this many seconds when the cheap bound says the agent may be over its limit."""


def _size(roots: Sequence[Path]) -> int:
    """Bytes the files and directories under `roots` take on disk, each inode once, symbolic links not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    pending = [str(r) for r in roots]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                stat = entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
            except OSError:
                continue
            if stat.st_nlink > 1 and not entry.is_dir(follow_symlinks=False):
                if (stat.st_dev, stat.st_ino) in seen:
                    continue
                seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return total


def _used(roots: Sequence[Path]) -> int:
    """Bytes in use on the file systems that hold `roots`, each file system once."""
    devices: dict[int, Path] = {}
    for root in roots:
        with contextlib.suppress(OSError):
            devices.setdefault(root.stat().st_dev, root)
    total = 0
    for root in devices.values():
        with contextlib.suppress(OSError):
            fs = os.statvfs(root)
            total += (fs.f_blocks - fs.f_bfree) * fs.f_frsize
    return total


class DiskBudget:
    """How much an agent's commands added to its worktree and tmp, against a limit, for all its commands together.

    An agent found over the limit may go on with commands that do not add more (to delete files, say).
    """

    def __init__(self, roots: Sequence[Path], limit_mb: int, where: str) -> None:
        """Start measuring `roots` as the agent starts, in a thread; `where` names them for the agent."""
        self.roots = tuple(roots)
        self.limit = limit_mb * _MB
        self.message = (
            f"the agent's commands added more than {limit_mb} MB to its {where} (the limit is sandbox.limits.disk_mb)"
        )
        self._base_size: Future[int] = Future()
        threading.Thread(target=self._measure, name="plait-disk-baseline", daemon=True).start()
        self._base: int | None = None
        self._grown = 0
        self._bound = 0
        self._floor = self.limit
        self._mark = 0
        self._walked = self._started = time.monotonic()
        self._cost = 0.0

    def _measure(self) -> None:
        self._base_size.set_result(_size(self.roots))

    def start(self) -> None:
        """A command starts: an agent already over the limit is held to what it has."""
        if self._base is None:  # measured since the agent started, so in as a rule: else its first command waits
            self._base = self._base_size.result()
        self._mark = _used(self.roots)
        self._started = time.monotonic()
        self._floor = max(self.limit, self._grown) if self._bound == 0 else self.limit

    def _grew(self) -> int:
        used = _used(self.roots)
        self._bound += max(used - self._mark, 0)
        self._mark = used
        return self._grown + self._bound

    async def over(self, *, final: bool = False) -> bool:
        """Whether the agent's commands have added more than they may, as far as a cheap look tells; the
        directories are walked only when the look cannot rule it out (or now and then, unless `final`)."""
        now = time.monotonic()
        quiet = _SHARE * self._cost
        if self._grew() > self._floor:
            due = final or now - self._walked > min(quiet, _URGENT)
        else:
            due = not final and now - max(self._walked, self._started) > max(quiet, _PERIOD)
        if not due:
            return False
        size = await asyncio.to_thread(_size, self.roots)
        self._walked = time.monotonic()
        self._cost = self._walked - now
        self._grown, self._bound = size - (self._base or 0), 0
        return self._grown > self._floor
