"""The bubblewrap command line: the system read-only, homes and plait's state hidden, a writable worktree, a
private /tmp and home, no network, own pid namespace, and (offline) no Unix sockets."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from plait.workspace.sandbox._confinement import Confinement

__all__ = ["bwrap_argv"]

_DAEMONS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/dbus",
    "/run/snapd.socket",
    "/run/systemd/private",
)
"""Unix sockets of daemons that would act for a command (docker is root): hidden when the network is off (the
seccomp filter refuses every new Unix socket then too; this is the second wall)."""

_ORDER = {"mask": 0, "ro": 1, "rw": 2, "secret": 3}


def _mounts(c: Confinement, network: bool) -> list[tuple[Path, str]]:
    """(path, kind) of every mount after the root, shallowest first, so that each deeper one lands on top."""
    ops: list[tuple[Path, str]] = [(p, "mask") for p in c.regions if p != Path("/tmp")]
    ops += [(p, "ro") for p in c.visible]
    ops += [(p.resolve(), "rw") for p in (c.worktree, *c.writable)]
    hidden = list(c.hidden)
    if not network:
        hidden += [Path(p) for p in _DAEMONS]
        if hasattr(os, "getuid"):
            hidden.append(Path(f"/run/user/{os.getuid()}"))
    ops += [(p.resolve(), "secret") for p in hidden]
    unique: dict[tuple[Path, str], None] = {}
    for path, kind in ops:
        if path.exists() or path.is_symlink():
            unique[(path, kind)] = None
    return sorted(unique, key=lambda op: (len(op[0].parts), _ORDER[op[1]]))


def bwrap_argv(
    bwrap: str,
    c: Confinement,
    argv: Sequence[str],
    *,
    cwd: Path,
    network: bool,
    root: bool,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The full argv that runs `argv` under bubblewrap, confined as `c` says.

    Later mounts cover earlier ones, so they go shallowest first: regions become empty read-only directories, the
    visible paths come back read-only inside them, the worktree writable, known secrets are covered again, and
    the worktree's `.git` link is read-only. /tmp is the agent's own tmp, HOME an empty directory in it.
    """
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    if root:
        args += ["--cap-drop", "ALL"]  # as root bwrap would otherwise keep the capabilities to undo its mounts
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(c.tmp), "/tmp"]
    masks: list[str] = []
    for path, kind in _mounts(c, network):
        if kind == "mask":
            args += ["--tmpfs", str(path)]
            masks.append(str(path))
        elif kind in ("ro", "rw"):
            args += ["--ro-bind" if kind == "ro" else "--bind", str(path), str(path)]
        elif path.is_dir() and not path.is_symlink():
            args += ["--tmpfs", str(path)]
            masks.append(str(path))
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    link = c.worktree.resolve() / ".git"
    if link.is_file():
        args += ["--ro-bind", str(link), str(link)]
    for mask in masks:  # last: bwrap makes the mount points of deeper binds inside them first
        args += ["--remount-ro", mask]
    args += ["--chdir", str(cwd.resolve()), "--", *argv]
    return args
