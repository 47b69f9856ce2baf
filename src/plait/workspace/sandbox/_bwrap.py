"""The bubblewrap command line: read-only root, a writable worktree, a private /tmp, no network, own pid namespace."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from plait.workspace.sandbox._confinement import Confinement

__all__ = ["bwrap_argv"]

_COVERED = (Path("/tmp"), Path("/dev"), Path("/proc"))
_DAEMONS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/dbus",
    "/run/snapd.socket",
    "/run/systemd/private",
)
"""Unix sockets of daemons that would act for a command (docker is root): hidden when the network is off."""


def _under(path: Path, roots: Sequence[Path]) -> bool:
    return any(path.is_relative_to(r) for r in roots)


def bwrap_argv(bwrap: str, c: Confinement, argv: Sequence[str], *, cwd: Path, network: bool, root: bool) -> list[str]:
    """The full argv that runs `argv` under bubblewrap, confined as `c` says.

    Later mounts cover earlier ones, so binds go shallowest first: the shared git directory read-only, then the
    worktree (which lives inside it) writable, then the worktree's `.git` link read-only, then hidden paths.
    """
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    if root:
        args += ["--cap-drop", "ALL"]  # as root bwrap would otherwise keep the capabilities to undo its mounts
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(c.tmp), "/tmp"]
    covered = _COVERED
    hidden = list(c.hidden)
    if not network:
        hidden += [Path(p) for p in _DAEMONS]
        if hasattr(os, "getuid"):
            hidden.append(Path(f"/run/user/{os.getuid()}"))  # the session bus, keyring and agent sockets
    binds: list[tuple[Path, str]] = [(c.common_dir.resolve(), "--ro-bind")]
    home = c.home.resolve()
    if _under(home, covered):
        binds.append((home, "--ro-bind"))
    # plait's own interpreter (and the tools of its environment) stay visible even when they live under /tmp
    for prefix in {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}:
        if _under(prefix, covered):
            binds.append((prefix, "--ro-bind"))
    binds += [(p.resolve(), "--bind") for p in (c.worktree, *c.writable)]
    visible = [p for p, _ in binds]
    for path, flag in sorted(binds, key=lambda b: len(b[0].parts)):
        if path.exists():
            args += [flag, str(path), str(path)]
    link = c.worktree.resolve() / ".git"
    if link.is_file():
        args += ["--ro-bind", str(link), str(link)]
    masked: set[Path] = set()
    for path in hidden:
        real = path.resolve()
        if real in masked or not real.exists() or (_under(real, covered) and not _under(real, visible)):
            continue
        masked.add(real)
        if real.is_dir():
            args += ["--tmpfs", str(real), "--remount-ro", str(real)]
        else:
            args += ["--ro-bind", "/dev/null", str(real)]
    args += ["--chdir", str(cwd.resolve()), "--", *argv]
    return args
