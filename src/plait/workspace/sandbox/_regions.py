"""Which parts of the machine an agent's commands may not see at all, and what inside them they need again."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["admin_dir", "machine_visible", "regions", "visible"]

_SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm", "/run/user", "/run/screen", "/run/tmux")
_SYSTEM = (Path("/usr"), Path("/etc"), Path("/bin"), Path("/lib"))


def admin_dir(worktree: Path) -> Path | None:
    """The worktree's own git admin directory (`<common>/worktrees/<id>`), from its `.git` link."""
    try:
        text = (worktree / ".git").read_text()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    path = Path(text.removeprefix("gitdir:").strip())
    return path if path.is_absolute() else (worktree / path).resolve()


def _safe(region: Path) -> bool:
    """A region may not swallow the system itself (a home of `/`, say)."""
    return region != Path("/") and not any(s.is_relative_to(region) for s in _SYSTEM)


def regions(*, home: Path, common_dir: Path) -> list[Path]:
    """Hidden as a whole: every home, the user's checkout, plait's state and worktrees, shared tmp directories."""
    found = [home, Path("/home"), Path("/root"), *map(Path, _SHARED_TMP), Path(tempfile.gettempdir())]
    if common_dir.name == ".git":
        found.append(common_dir.parent)  # the user's checkout: uncommitted work, untracked .env files
    found += [common_dir / "plait", common_dir / "worktrees"]
    out: list[Path] = []
    for path in found:
        real = path.resolve()
        if _safe(real) and (real.exists() or real.is_symlink()) and real not in out:
            out.append(real)
    return out


def machine_visible(*, common_dir: Path, home: Path, env: Mapping[str, str]) -> list[Path]:
    """The part of `visible` that is the same for every worktree: the Python plait runs on and what it imports
    from, and the directories on PATH (a `bin` with its parent, where a toolchain keeps its libraries)."""
    out = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.executable).resolve().parent]
    too_wide = {home.resolve(), Path("/home"), Path("/root"), Path("/"), common_dir.resolve().parent}
    # What plait's own Python imports from (an editable install's source lies outside its prefix).
    out += [Path(p).resolve() for p in sys.path if p and Path(p).is_absolute() and Path(p).resolve() not in too_wide]
    for entry in env.get("PATH", "").split(os.pathsep):
        if not entry or not Path(entry).is_absolute():
            continue
        path = Path(entry).resolve()
        if path.name == "bin" and path.parent not in too_wide:
            path = path.parent
        if path not in too_wide and path.is_dir():
            out.append(path)
    return out


def visible(
    *,
    worktree: Path,
    common_dir: Path,
    home: Path,
    env: Mapping[str, str],
    allowed: Iterable[Path] = (),
    machine: Iterable[Path] | None = None,
) -> list[Path]:
    """Shown again inside the regions, read-only: the shared `.git`, this worktree's admin directory, what
    `machine_visible` lists (`machine`, when it was listed already) and what the user's `read` + `allow` rules
    name."""
    out = [common_dir.resolve()]
    admin = admin_dir(worktree)
    if admin is not None:
        out.append(admin.resolve())
    out += machine_visible(common_dir=common_dir, home=home, env=env) if machine is None else machine
    out += [p.resolve() for p in allowed]
    unique: list[Path] = []
    seen: set[Path] = set()
    for path in out:
        if path not in seen and path.exists():
            seen.add(path)
            unique.append(path)
    return unique
