"""The OS layers behind one interface: each turns a command's argv into a confined one, plus set-up in the child."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from plait.workspace.sandbox import _landlock
from plait.workspace.sandbox._bwrap import bwrap_argv
from plait.workspace.sandbox._confinement import Confinement
from plait.workspace.sandbox._seccomp import SocketFilter
from plait.workspace.sandbox.probe import LayerName, Probe
from plait.workspace.sandbox.seatbelt import seatbelt_argv

__all__ = ["Layer", "make_layer"]

ChildSetup = Callable[[], None]
Prepared = tuple[list[str], ChildSetup | None, tuple[int, ...]]
"""The argv to start, what the child runs before exec (after the limits), and file descriptors it inherits (the
runner closes them once the command has started)."""


class Layer(Protocol):
    """One OS sandbox mechanism, prepared for one agent's confinement."""

    name: LayerName
    pid_namespace: bool
    """Every process of a command dies with its leader (a pid namespace)."""
    tmpdir: str
    """TMPDIR as the command sees it."""

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> Prepared:
        """How to start `argv` confined: see `Prepared`."""
        ...

    def close(self) -> None:
        """Release what the layer holds (file descriptors)."""
        ...


class NoLayer:
    """No OS confinement: the rules, the limits and the environment scrub are all there is."""

    name: LayerName = "none"
    pid_namespace = False

    def __init__(self, c: Confinement) -> None:
        self.tmpdir = str(c.tmp)

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> Prepared:
        return list(argv), None, ()

    def close(self) -> None:
        return None


class BwrapLayer:
    """bubblewrap: a fresh mount, pid and (unless the network is allowed) network namespace per command; offline,
    a seccomp filter (loaded by bwrap itself) refuses Unix sockets, the one way out of a network namespace."""

    name: LayerName = "bwrap"
    pid_namespace = True
    tmpdir = "/tmp"

    def __init__(self, c: Confinement, bwrap: str, *, root: bool, seccomp: bool) -> None:
        self._c = c
        self._bwrap = bwrap
        self._root = root
        self._program: int | None = None
        if seccomp:
            self._program = os.memfd_create("plait-seccomp", os.MFD_CLOEXEC)
            os.write(self._program, SocketFilter({socket.AF_UNIX}).program())

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> Prepared:
        fds: tuple[int, ...] = ()
        if not network and self._program is not None:
            fds = (os.open(f"/proc/self/fd/{self._program}", os.O_RDONLY),)  # its own offset, read from the start
        out = bwrap_argv(
            self._bwrap, self._c, argv, cwd=cwd, network=network, root=self._root, seccomp_fd=fds[0] if fds else None
        )
        return out, None, fds

    def close(self) -> None:
        if self._program is not None:
            os.close(self._program)
            self._program = None


class LandlockLayer:
    """Landlock for files (and TCP), plus a seccomp filter against every new socket when offline.

    Rights are granted to what exists when a ruleset is built: what appears later below a walked directory is
    unreadable, which is safe (a secret in a hidden region stays hidden either way) but would starve git of a
    `config` or `packed-refs` it replaced in the shared `.git`; so the ruleset is built anew whenever that
    directory has changed since.
    """

    name: LayerName = "landlock"
    pid_namespace = False
    _KEEP = 4  # rulesets kept open: a command's child enforces its ruleset just after it is prepared

    def __init__(self, c: Confinement, version: int, *, seccomp: bool) -> None:
        self._c = c
        self._version = version
        self.tmpdir = str(c.tmp)
        self._filter = SocketFilter() if seccomp else None
        self._open: list[_landlock.Ruleset] = []
        self._built: dict[bool, tuple[int, _landlock.Ruleset]] = {}
        self._ruleset(False)  # fail now, not in the first command, if the kernel refuses the rules

    def _ruleset(self, network: bool) -> _landlock.Ruleset:
        c = self._c
        try:
            stamp = c.common_dir.stat().st_mtime_ns
        except OSError:
            stamp = -1
        built = self._built.get(network)
        if built is not None and built[0] == stamp and built[1] in self._open:
            return built[1]
        writable = [c.worktree, c.tmp, *c.writable, *map(Path, ("/dev/null", "/dev/zero", "/dev/full"))]
        ruleset = _landlock.Ruleset(
            self._version, writable=writable, hidden=[*c.regions, *c.hidden], visible=c.visible, network=network
        )
        self._open.append(ruleset)
        self._built[network] = (stamp, ruleset)
        while len(self._open) > self._KEEP:
            self._open.pop(0).close()
        return ruleset

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> Prepared:
        fd = self._ruleset(network).fd
        socket_filter = None if network else self._filter

        def setup() -> None:
            _landlock.restrict_self(fd)
            if socket_filter is not None:
                socket_filter.install()

        return list(argv), setup, ()

    def close(self) -> None:
        for ruleset in self._open:
            ruleset.close()
        self._open.clear()
        self._built.clear()


class SeatbeltLayer:
    """macOS sandbox-exec with a generated profile."""

    name: LayerName = "seatbelt"
    pid_namespace = False

    def __init__(self, c: Confinement, exe: str) -> None:
        self._c = c
        self._exe = exe
        self.tmpdir = str(c.tmp)

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> Prepared:
        return seatbelt_argv(self._c, argv, network=network, sandbox_exec=self._exe), None, ()

    def close(self) -> None:
        return None


def make_layer(name: LayerName, c: Confinement, found: Probe) -> Layer:
    """The named layer (one the probe found usable), prepared for `c`."""
    if name == "bwrap":
        return BwrapLayer(c, found.bwrap, root=found.root, seccomp=found.seccomp)
    if name == "landlock":
        return LandlockLayer(c, found.landlock_abi, seccomp=found.seccomp)
    if name == "seatbelt":
        return SeatbeltLayer(c, found.seatbelt)
    return NoLayer(c)
