"""Finding where plait may make cgroups, and killing a command's processes without one: a sweep by marker."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

__all__ = ["Controller", "cgroup_parent", "children", "descendants", "holding", "kill_all", "marked"]

Controller = Literal["pids", "memory"]
_LIMIT_FILE = {"pids": ("pids.max",), "memory": ("memory.max", "memory.limit_in_bytes")}
"""A cgroup with the controller has one of these files (v2 first, then v1)."""


def _mounts() -> list[tuple[str, Path, set[str]]]:
    """(file system type, mount point, super options) of every mount, from /proc/self/mountinfo."""
    out = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3:
                out.append((tail[0], Path(fields[4]), set(tail[2].split(","))))
    return out


def _candidates(controller: Controller) -> list[Path]:
    """This process's own cgroup directories that could hold children with `controller`, v1 first, then v2."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    mine = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        mine[controllers] = path.lstrip("/")
    out = []
    for kind, point, options in _mounts():
        if kind == "cgroup" and controller in options:
            key = next((c for c in mine if controller in c.split(",")), None)
            if key is not None:
                out.append(point / mine[key])
        elif kind == "cgroup2" and "" in mine:
            directory = point / mine[""]
            with contextlib.suppress(OSError):
                if controller in (directory / "cgroup.subtree_control").read_text().split():
                    out.append(directory)
    return out


def _remove_stale(parent: Path) -> None:
    """Remove the empty cgroups (and their commands' cgroups) left by plait processes that died before they could."""
    for stale in parent.glob("plait-*-*"):
        owner = stale.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                for leaf in stale.glob("command-*"):
                    leaf.rmdir()
                stale.rmdir()


def cgroup_parent(controller: Controller = "pids") -> tuple[Path | None, str]:
    """(directory, "") where plait can make cgroups with `controller`, or (None, why not)."""
    candidates = _candidates(controller)
    if not candidates:
        return None, f"no {controller} cgroup controller is delegated to plait"
    reason = ""
    for parent in candidates:
        probe = parent / f"plait-probe-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        try:
            probe.mkdir()
        except OSError as exc:
            reason = f"cannot create a cgroup in {parent}: {exc.strerror}"
            continue
        usable = any((probe / name).exists() for name in _LIMIT_FILE[controller])
        with contextlib.suppress(OSError):
            probe.rmdir()
        if usable:
            _remove_stale(parent)
            return parent, ""
        reason = f"{parent} has no {controller} controller"
    return None, reason


def marked(marker: str) -> list[int]:
    """Processes whose environment holds `marker`: those that left both the command's session and its parent.

    A process that removed the marker from its environment is not found; the pids cgroup has no such gap.
    """
    needle = marker.encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:  # noqa: PTH123
                if needle in fh.read():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def holding(target: str) -> list[int]:
    """Processes with a file descriptor that links to `target` (such as "pipe:[1234]"), this one excepted."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = list(os.scandir(f"/proc/{entry.name}/fd"))
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if str(Path(fd.path).readlink()) == target:
                    found.append(int(entry.name))
                    break
    return found


def _by_parent(pid: int) -> list[int]:
    """Children of `pid` found by a walk of every process (for kernels without /proc/PID/task/TID/children)."""
    out = []
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if entry.name.isdigit():
                stat = Path(f"/proc/{entry.name}/stat").read_text()
                if int(stat[stat.rfind(")") + 2 :].split()[1]) == pid:
                    out.append(int(entry.name))
    return out


def children(pid: int) -> list[int]:
    """The children of `pid`'s threads, from /proc."""
    out: list[int] = []
    try:
        tasks = [t.name for t in os.scandir(f"/proc/{pid}/task")]
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except FileNotFoundError:
            if Path(f"/proc/{pid}/task/{tid}").exists():
                return _by_parent(pid)
        except (OSError, ValueError):
            continue
    return out


def descendants(pid: int) -> int:
    """How many processes descend from `pid`, walking /proc children lists: cheap, but blind to orphans
    re-parented elsewhere (none are, in a pid namespace whose init descends from `pid`)."""
    count, pending = 0, [pid]
    while pending:
        found = children(pending.pop())
        count += len(found)
        pending.extend(found)
    return count


def kill_all(find: Callable[[], Iterable[int]], rounds: int = 50) -> None:
    """SIGKILL what `find` returns, again and again until it finds nothing: a fork bomb outruns one pass."""
    for _ in range(rounds):
        victims = set(find())
        if not victims:
            return
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
