"""The OS layers behind one interface: each turns a command's argv into a confined one, plus set-up in the child."""

from __future__ import annotations

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


class Layer(Protocol):
    """One OS sandbox mechanism, prepared for one agent's confinement."""

    name: LayerName
    pid_namespace: bool
    """Every process of a command dies with its leader (a pid namespace)."""
    tmpdir: str
    """TMPDIR as the command sees it."""

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> tuple[list[str], ChildSetup | None]:
        """The argv to start and what the child runs before exec (after the limits)."""
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

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> tuple[list[str], ChildSetup | None]:
        return list(argv), None

    def close(self) -> None:
        return None


class BwrapLayer:
    """bubblewrap: a fresh mount, pid and (unless the network is allowed) network namespace per command."""

    name: LayerName = "bwrap"
    pid_namespace = True
    tmpdir = "/tmp"

    def __init__(self, c: Confinement, bwrap: str, *, root: bool) -> None:
        self._c = c
        self._bwrap = bwrap
        self._root = root

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> tuple[list[str], ChildSetup | None]:
        return bwrap_argv(self._bwrap, self._c, argv, cwd=cwd, network=network, root=self._root), None

    def close(self) -> None:
        return None


class LandlockLayer:
    """Landlock for files (and TCP), plus a seccomp filter against every socket but Unix ones when offline."""

    name: LayerName = "landlock"
    pid_namespace = False

    def __init__(self, c: Confinement, version: int, *, seccomp: bool) -> None:
        self._c = c
        self._version = version
        self.tmpdir = str(c.tmp)
        self._filter = SocketFilter() if seccomp else None
        self._rulesets: dict[bool, _landlock.Ruleset] = {}
        self._ruleset(False)  # fail now, not in the first command, if the kernel refuses the rules

    def _ruleset(self, network: bool) -> _landlock.Ruleset:
        if network not in self._rulesets:
            c = self._c
            writable = [c.worktree, c.tmp, *c.writable, *map(Path, ("/dev/null", "/dev/zero", "/dev/full"))]
            if Path("/dev/shm").is_dir():
                writable.append(Path("/dev/shm"))
            self._rulesets[network] = _landlock.Ruleset(
                self._version, writable=writable, hidden=c.hidden, network=network
            )
        return self._rulesets[network]

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> tuple[list[str], ChildSetup | None]:
        fd = self._ruleset(network).fd
        socket_filter = None if network else self._filter

        def setup() -> None:
            _landlock.restrict_self(fd)
            if socket_filter is not None:
                socket_filter.install()

        return list(argv), setup

    def close(self) -> None:
        for ruleset in self._rulesets.values():
            ruleset.close()
        self._rulesets.clear()


class SeatbeltLayer:
    """macOS sandbox-exec with a generated profile."""

    name: LayerName = "seatbelt"
    pid_namespace = False

    def __init__(self, c: Confinement, exe: str) -> None:
        self._c = c
        self._exe = exe
        self.tmpdir = str(c.tmp)

    def prepare(self, argv: Sequence[str], *, cwd: Path, network: bool) -> tuple[list[str], ChildSetup | None]:
        return seatbelt_argv(self._c, argv, network=network, sandbox_exec=self._exe), None

    def close(self) -> None:
        return None


def make_layer(name: LayerName, c: Confinement, found: Probe) -> Layer:
    """The named layer (one the probe found usable), prepared for `c`."""
    if name == "bwrap":
        return BwrapLayer(c, found.bwrap, root=found.root)
    if name == "landlock":
        return LandlockLayer(c, found.landlock_abi, seccomp=found.seccomp)
    if name == "seatbelt":
        return SeatbeltLayer(c, found.seatbelt)
    return NoLayer(c)
