"""Overlay mounts of layered worktrees (see `_layers`): made, found, and taken away, whatever process made them.

Kept apart from `_layers` so that everything that removes a worktree (`_worktrees.drop`, `remove`, a run's
clean-up) can unmount first without importing git's side of the workspace.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

__all__ = ["LAYER", "can_layer", "close_layered", "mount", "overlays", "unmount_under"]

LAYER = ".layer-"
"""The name prefix of the directory holding one layered worktree's own files (`upper`) and the mount's `work`."""

_MNT_DETACH = 2
_NOSUID, _NODEV = 2, 4
_UNSAFE = ",:\\\n"
"""Characters an overlay's options cannot carry in a path: a directory holding one is never mounted over."""
_probed: dict[int, bool] = {}


def can_layer(where: Path) -> bool:
    """Whether overlay mounts can be made under `where` (a directory): tried once per filesystem and process (a
    path the options cannot carry says no for itself alone)."""
    if _unsafe(where):
        return False
    try:
        where.mkdir(parents=True, exist_ok=True)
        device = where.stat().st_dev
    except OSError:
        return False
    if device not in _probed:
        _probed[device] = _probe(where)
    return _probed[device]


def close_layered(path: Path) -> bool:
    """Unmount the layered worktree at `path` and delete its layer and git's records of it; False when `path`
    is not one (nothing is done)."""
    path = path.absolute()
    layer = path.parent / f"{LAYER}{path.name}"
    mounted = _mounted(path)
    if not mounted and not layer.is_dir():
        return False
    if mounted:
        _unmount(path)
    dotgit = layer / "upper" / ".git"
    try:
        admin = Path(dotgit.read_text().removeprefix("gitdir:").strip())
    except OSError:
        admin = None
    shutil.rmtree(layer, ignore_errors=True)
    if admin is not None and admin.parent.name == "worktrees" and admin.is_dir():
        shutil.rmtree(admin, ignore_errors=True)
    with contextlib.suppress(OSError):
        path.rmdir()
    return True


def unmount_under(root: Path) -> None:
    """Unmount every layered worktree under `root` (a run's directory of worktrees, before it is deleted)."""
    prefix = f"{os.path.realpath(root)}/"
    for point in overlays():
        if point.startswith(prefix):
            _unmount(Path(point))


def _libc() -> ctypes.CDLL:
    import ctypes  # only where a mount is made or taken away: not at every start of plait

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


def mount(path: Path, lower: Path, upper: Path, work: Path) -> None:
    """Mount an overlay of `upper` over `lower` at `path`, no device files or set-user-id programs honoured.

    Directories of the lower layer can be renamed (`redirect_dir`): without it a rename of one fails with EXDEV,
    which a normal working tree never does, so a kernel without it is one plait does not layer on.
    """
    dirs = [os.path.realpath(d) for d in (lower, upper, work)]
    if any(_unsafe(Path(d)) for d in dirs):
        raise OSError(f"cannot mount an overlay of {lower}: its path holds a character the options cannot carry")
    options = f"lowerdir={dirs[0]},upperdir={dirs[1]},workdir={dirs[2]},redirect_dir=on"
    if _libc().mount(b"overlay", os.fsencode(path), b"overlay", _NOSUID | _NODEV, options.encode()) != 0:
        import ctypes

        errno = ctypes.get_errno()
        raise OSError(errno, f"cannot mount an overlay at {path}: {os.strerror(errno)}")


def _unmount(path: Path) -> None:
    # detached: a process still inside (an agent's command left running) does not keep it from going
    _libc().umount2(os.fsencode(path), _MNT_DETACH)


def overlays() -> dict[str, str]:
    """Every overlay mount of this mount namespace: its mount point, and its options."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split(" ")
        if " - overlay " not in line or len(fields) < 5:
            continue
        point = _unescape(fields[4])
        found[point] = _unescape(line.rsplit(" ", 1)[-1])
    return found


def _unsafe(path: Path) -> bool:
    """Whether `path`, as the kernel will see it, holds a character the overlay's options cannot carry."""
    return any(c in os.path.realpath(path) for c in _UNSAFE)


def _mounted(path: Path) -> bool:
    """Whether an overlay is mounted at `path`."""
    return os.path.realpath(path) in overlays()


def _unescape(field: str) -> str:
    """A path of `/proc/self/mountinfo`, whose spaces, tabs, newlines and backslashes are octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def _probe(where: Path) -> bool:
    """Whether an overlay as `mount` makes it can be mounted under `where` (and is taken away again)."""
    probe = where / f".probe-{os.getpid()}"
    try:
        for part in ("lower", "upper", "work", "merged"):
            (probe / part).mkdir(parents=True, exist_ok=True)
        mount(probe / "merged", probe / "lower", probe / "upper", probe / "work")
    except OSError:
        return False
    else:
        _unmount(probe / "merged")
        return True
    finally:
        shutil.rmtree(probe, ignore_errors=True)
