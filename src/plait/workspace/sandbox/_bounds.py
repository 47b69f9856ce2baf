"""One command's bounds: its processes put in the agent's cgroups with their limits set, a watch on the agent's
totals (processes, memory, disk), and the kill of all the command left behind."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from plait.sandbox_settings import Limits
from plait.workspace.command import process_tree
from plait.workspace.sandbox._cgroups import AgentCgroups
from plait.workspace.sandbox._disk import DiskBudget
from plait.workspace.sandbox._limits import CapabilityDrop, apply_rlimits, prlimits, rlimits, system_tasks
from plait.workspace.sandbox._procs import children, descendants, holding, kill_all, marked

__all__ = ["Bounds"]

_POLL = 0.02
_RECOUNT = 25  # polls between two walks of /proc when nothing else calls for one
_SPIN = 0.002  # waits for a blocked child shorter than this sleep without giving the event loop back
Hit = tuple[str, str]
"""(the limit, what the agent is told)."""


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


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


async def _children_of_blocked(pid: int, seconds: float = 10.0) -> list[int]:
    """The children of a just-started process, once it has made one ([] if it ended first)."""
    deadline = time.monotonic() + seconds
    pause = 0.00005
    while not (found := children(pid)):
        if not _running(pid):
            return []
        if time.monotonic() > deadline:
            raise OSError(errno.ETIMEDOUT, "the sandbox did not start in time")
        if pause < _SPIN:  # bwrap makes its child within a millisecond: the event loop's timer is coarser
            time.sleep(pause)  # noqa: ASYNC251
        else:
            await asyncio.sleep(pause)
        pause = min(pause * 2, 0.01)
    return found


class Bounds:
    """Limits for one command, with the agent's cgroups when there are some, else a watchdog; killing finds every
    process.

    Without a cgroup or a pid namespace, leftovers are found by their session, group and parents, then by a
    marker in their environment, which a process can remove; as root nothing but the watchdog bounds the count.
    """

    def __init__(
        self,
        limits: Limits,
        *,
        marker: str,
        agent: AgentCgroups | None,
        disk: DiskBudget | None,
        root: bool,
        drop: CapabilityDrop | None,
        pid_namespace: bool,
        layer_setup: Callable[[], None] | None,
        blocked: bool = False,
        inside: bool = False,
    ) -> None:
        """`blocked`: the command starts waiting on `block_fd` (bwrap's --block-fd) until `confine` lets it go, so
        no set-up runs in the child; `inside`: it starts inside the agent's cgroups already (see `spawner`)."""
        self.limits = limits
        self.marker = marker
        self._agent = agent
        self._disk = disk
        self.leaf = agent.command() if agent is not None and not pid_namespace else None
        self._joins = agent.joins(self.leaf) if agent is not None else []
        self._table = rlimits(limits, root=root)
        self._drop = drop
        self._pid_namespace = pid_namespace
        self._layer_setup = layer_setup
        self._leader: int | None = None
        self._base = 0
        self._refused = agent.refused_forks(self.leaf) if agent is not None else 0
        self._ooms = agent.oom_kills() if agent is not None else 0
        self._block = os.pipe() if blocked else None
        self._inside = inside
        self.hits: list[Hit] = []
        if disk is not None:
            disk.start()

    @property
    def block_fd(self) -> int | None:
        """The pipe end a blocked command waits on (to be passed to it), None when it is not blocked."""
        return self._block[0] if self._block else None

    @property
    def counted(self) -> bool:
        """Whether a cgroup counts the command's processes."""
        return self._agent is not None and self._agent.pids is not None

    def setup(self) -> None:
        """In the child, before exec: join the cgroups, set the limits, drop root's capabilities, then the layer."""
        for group in self._joins:
            group.join()
        apply_rlimits(self._table)
        if self._drop is not None:
            self._drop()
        if self._layer_setup is not None:
            self._layer_setup()

    async def confine(self, pid: int) -> None:
        """Put a blocked command in the cgroups and set its limits, then let it go.

        Nothing of the command has run yet: bwrap forks it only once let go, from its child, which is moved and
        limited here. bwrap itself, which only waits for that child, stays outside: one move fewer, and a move
        can cost a few milliseconds (the kernel waits for an RCU grace period).
        """
        if self._block is None:
            return
        try:
            for child in await _children_of_blocked(pid):
                for group in [] if self._inside else self._joins:
                    group.add(child)
                prlimits(child, self._table)
            os.write(self._block[1], b"go")
        except OSError as exc:
            self._abort()
            raise subprocess.SubprocessError(f"cannot bound its processes: {exc.strerror or exc}") from exc
        except BaseException:
            self._abort()
            raise
        self._close_block()

    def _counted_hit(self) -> Hit | None:
        agent = self._agent
        if agent is None:
            return None
        if agent.oom_kills() > self._ooms:
            return "memory", (
                f"the agent's commands used more than {self.limits.memory_mb} MB of memory "
                "(the limit is sandbox.limits.memory_mb)"
            )
        if agent.pids is not None and agent.refused_forks(self.leaf) > self._refused:
            return "processes", (
                f"the agent's commands tried to run more than {self.limits.processes} processes at once "
                "(the limit is sandbox.limits.processes)"
            )
        return None

    def _uncounted_hit(self, pid: int, polls: int) -> Hit | None:
        """Without a cgroup the tree is counted every so often, and at once when the machine's task count jumps."""
        most = self.limits.processes
        if self._pid_namespace:
            hit = descendants(pid) > most  # cheap: the walk follows the tree, not all of /proc
        elif system_tasks() - self._base > most:  # a jump: stop the group while counting, a fork bomb outruns a walk
            hit = _count_frozen(pid) > most
            self._base = system_tasks()
        elif polls % _RECOUNT == 0:  # the machine's count can hide ours when other processes end meanwhile
            hit = len(process_tree(pid)) > most
            self._base = system_tasks()
        else:
            hit = False
        return ("processes", f"the command tried to run more than {most} processes at once") if hit else None

    async def watch(self, pid: int) -> str:
        """Return (so the command is stopped) once the agent goes over a limit: processes, memory or disk."""
        self._leader = pid
        self._base = system_tasks()
        polls = 0
        while True:
            await asyncio.sleep(_POLL)
            polls += 1
            hit = self._counted_hit() or (None if self.counted else self._uncounted_hit(pid, polls))
            if hit is None and self._disk is not None and await self._disk.over():
                hit = "disk", self._disk.message
            if hit is not None:
                self.hits.append((hit[0], f"stopped: {hit[1]}"))
                return self.hits[-1][1]

    async def finish(self) -> None:
        """After the command: note a limit it hit that the watch did not see before it ended."""
        if self.hits:
            return
        hit = self._counted_hit()
        if hit is not None:
            then = "the kernel killed some of its processes" if hit[0] == "memory" else "forks past it failed"
            self.hits.append((hit[0], f"{hit[1]}; {then}"))
        elif self._disk is not None and await self._disk.over(final=True):
            self.hits.append(("disk", f"{self._disk.message}; delete files, or the next command that adds more stops"))

    def reap(self) -> None:
        """SIGKILL whatever the command left running, including processes that left its session."""
        if self.leaf is not None:
            self.leaf.kill()
        elif not self._pid_namespace:
            leader = self._leader
            kill_all(lambda: [*marked(self.marker), *(process_tree(leader) if leader else [])])

    def _close_block(self) -> None:
        if self._block is not None:
            for fd in self._block:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._block = None

    def _abort(self) -> None:
        """Kill a blocked command that was not let go, before its pipe closes: at the end of the pipe it would run
        unbounded. Every process that holds the pipe is one of its own (bwrap and its child)."""
        if self._block is not None:
            pipe = f"pipe:[{os.fstat(self._block[0]).st_ino}]"
            kill_all(lambda: holding(pipe))

    async def close(self) -> None:
        """Remove the command's cgroup once its processes are gone, and let go of the pipe a blocked one waited on."""
        self._abort()
        self._close_block()
        if self.leaf is not None:
            await asyncio.to_thread(self.leaf.remove)
