"""One command's bounds: set-up in the child, a watch on its process count, and the kill of all it left behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

from plait.workspace.command import process_tree
from plait.workspace.policy import Limits
from plait.workspace.sandbox._limits import CapabilityDrop, apply_rlimits, rlimits, system_tasks
from plait.workspace.sandbox._procs import PidsCgroup, descendants, kill_all, marked

__all__ = ["Bounds"]

_POLL = 0.02
_RECOUNT = 25  # polls between two walks of /proc when nothing else calls for one


def _count_frozen(leader: int) -> int:
    """The size of the command's tree, counted with its process group stopped so that a fork bomb cannot outgrow
    the walk of /proc; the group goes on afterwards."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGSTOP)
    try:
        return len(process_tree(leader))
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, signal.SIGCONT)


class Bounds:
    """Limits for one command: a pids cgroup when there is one, else a watchdog; killing finds every process.

    Without a cgroup or a pid namespace, leftovers are found by their session, group and parents, then by a
    marker in their environment, which a process can remove; as root nothing but the watchdog bounds the count.
    """

    def __init__(
        self,
        limits: Limits,
        *,
        marker: str,
        cgroup_parent: Path | None,
        root: bool,
        drop: CapabilityDrop | None,
        pid_namespace: bool,
        layer_setup: Callable[[], None] | None,
    ) -> None:
        self.limits = limits
        self.marker = marker
        self.cgroup: PidsCgroup | None = None
        if cgroup_parent is not None:
            with contextlib.suppress(OSError):
                self.cgroup = PidsCgroup(cgroup_parent, limits.processes)
        self._table = rlimits(limits, root=root)
        self._drop = drop
        self._pid_namespace = pid_namespace
        self._layer_setup = layer_setup
        self._leader: int | None = None
        self.stopped = ""

    def setup(self) -> None:
        """In the child, before exec: join the cgroup, set the limits, drop root's capabilities, then the layer."""
        if self.cgroup is not None:
            self.cgroup.join()
        apply_rlimits(self._table)
        if self._drop is not None:
            self._drop()
        if self._layer_setup is not None:
            self._layer_setup()

    async def watch(self, pid: int) -> str:
        """Return (so the command is stopped) once it runs more processes at once than the limit allows.

        Without a cgroup the tree is counted every so often, and at once when the machine's task count jumps.
        """
        self._leader = pid
        most = self.limits.processes
        base = system_tasks()
        polls = 0
        while True:
            await asyncio.sleep(_POLL)
            polls += 1
            if self.cgroup is not None:
                hit = self.cgroup.hit_limit()
            elif self._pid_namespace:
                hit = descendants(pid) > most  # cheap: the walk follows the tree, not all of /proc
            elif system_tasks() - base > most:  # a jump: stop the group while counting, a fork bomb outruns a walk
                hit = _count_frozen(pid) > most
                base = system_tasks()
            elif polls % _RECOUNT == 0:  # the machine's count can hide ours when other processes end meanwhile
                hit = len(process_tree(pid)) > most
                base = system_tasks()
            else:
                continue
            if hit:
                self.stopped = f"stopped: the command tried to run more than {most} processes at once"
                return self.stopped

    def reap(self) -> None:
        """SIGKILL whatever the command left running, including processes that left its session."""
        if self.cgroup is not None:
            self.cgroup.kill()
        elif not self._pid_namespace:
            leader = self._leader
            kill_all(lambda: [*marked(self.marker), *(process_tree(leader) if leader else [])])

    async def close(self) -> None:
        """Remove the cgroup once its processes are gone."""
        if self.cgroup is not None:
            await asyncio.to_thread(self.cgroup.close)
