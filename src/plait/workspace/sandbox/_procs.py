"""Bounding and killing a command's processes: a pids cgroup where plait may make one, else a sweep by marker."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["PidsCgroup", "cgroup_parent", "descendants", "kill_all", "marked"]


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


def _candidates() -> list[Path]:
    """This process's own cgroup directories that could hold pids-limited children, v1 first, then v2."""
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
        if kind == "cgroup" and "pids" in options:
            key = next((c for c in mine if "pids" in c.split(",")), None)
            if key is not None:
                out.append(point / mine[key])
        elif kind == "cgroup2" and "" in mine:
            directory = point / mine[""]
            with contextlib.suppress(OSError):
                if "pids" in (directory / "cgroup.subtree_control").read_text().split():
                    out.append(directory)
    return out


def _remove_stale(parent: Path) -> None:
    """Remove the empty cgroups left by plait processes that died before they could."""
    for stale in parent.glob("plait-*-*"):
        owner = stale.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                stale.rmdir()


def cgroup_parent() -> tuple[Path | None, str]:
    """(directory, "") where plait can make pids cgroups, or (None, why not)."""
    candidates = _candidates()
    if not candidates:
        return None, "no pids cgroup controller is delegated to plait"
    reason = ""
    for parent in candidates:
        probe = parent / f"plait-probe-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        try:
            probe.mkdir()
        except OSError as exc:
            reason = f"cannot create a cgroup in {parent}: {exc.strerror}"
            continue
        usable = (probe / "pids.max").exists()
        with contextlib.suppress(OSError):
            probe.rmdir()
        if usable:
            _remove_stale(parent)
            return parent, ""
        reason = f"{parent} has no pids controller"
    return None, reason


class PidsCgroup:
    """One command's cgroup: at most `limit` processes at once, and every one of them can be killed."""

    def __init__(self, parent: Path, limit: int) -> None:
        """Create it; raises OSError when the cgroup file system refuses."""
        self.path = parent / f"plait-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        self.path.mkdir()
        try:
            (self.path / "pids.max").write_text(str(limit))
            self._procs_fd = os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            self.path.rmdir()
            raise

    def join(self) -> None:
        """Move the calling process into the cgroup (in the child, before exec: all it starts stays inside)."""
        os.write(self._procs_fd, b"0")

    def hit_limit(self) -> bool:
        """Whether a fork was refused because the limit was reached."""
        try:
            events = (self.path / "pids.events").read_text().split()
        except OSError:
            return False
        return len(events) >= 2 and events[0] == "max" and events[1] != "0"

    def pids(self) -> list[int]:
        """Processes in the cgroup now."""
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
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

    def close(self, wait: float = 2.0) -> bool:
        """Remove the cgroup once its killed processes are reaped (waiting up to `wait` seconds); False if it stays."""
        os.close(self._procs_fd)
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


def descendants(pid: int) -> int:
    """How many processes descend from `pid`, walking /proc children lists: cheap, but blind to orphans
    re-parented elsewhere (none are, in a pid namespace whose init descends from `pid`)."""
    count, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            tasks = [t.name for t in Path(f"/proc/{current}/task").iterdir()]
        except OSError:
            continue
        for tid in tasks:
            try:
                children = Path(f"/proc/{current}/task/{tid}/children").read_text().split()
            except OSError:
                continue
            count += len(children)
            pending.extend(int(c) for c in children)
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
