"""Confine a path a model supplied to the worktree it works in."""

from __future__ import annotations

from pathlib import Path, PurePath

from plait.errors import PlaitError

__all__ = ["PathEscape", "confine"]


class PathEscape(PlaitError):
    """A model-supplied path points outside the worktree, into `.git`, or nowhere; the message says why."""


def _is_git(part: str) -> bool:
    return part.casefold() == ".git"


def _relative_parts(base: Path, root: Path, path: str) -> tuple[str, ...]:
    """The components of `path` below the root, refusing an absolute path elsewhere."""
    given = PurePath(path)
    if not given.is_absolute():
        return given.parts
    for anchor in (root, base):
        if given.is_relative_to(anchor):
            return given.relative_to(anchor).parts
    try:
        real = Path(path).resolve()
    except (OSError, RuntimeError) as exc:
        raise PathEscape(f"{path} cannot be resolved ({exc}): use a path relative to the worktree root") from exc
    if real.is_relative_to(base):
        return real.relative_to(base).parts
    raise PathEscape(
        f"{path} is outside the worktree: use a path relative to the worktree root (list_files shows them)"
    )


def confine(root: Path, path: str) -> Path:
    """Resolve `path` (relative to `root`, or absolute inside it) to a real path inside `root`.

    Raises `PathEscape` for an empty path, a `..` or symlink that leaves the root, and anything in `.git`.
    """
    if not path.strip():
        raise PathEscape("the path is empty: give a path relative to the worktree root (list_files shows them)")
    if "\0" in path:
        raise PathEscape("the path contains a NUL byte: give a plain path relative to the worktree root")
    if path == "~" or path.startswith("~/"):
        raise PathEscape(f"{path} is in a home directory, outside the worktree: use a path relative to its root")
    root = root.absolute()
    base = root.resolve()
    current = base
    try:
        for part in _relative_parts(base, root, path):
            if part in ("", "."):
                continue
            if part == "..":
                if current == base:
                    raise PathEscape(f"{path} leaves the worktree through '..': stay inside the worktree root")
                current = current.parent
                continue
            if _is_git(part):
                raise PathEscape(f"{path} is inside .git, which is off limits: git state is managed by plait")
            step = current / part
            if step.is_symlink():
                target = step.resolve()
                if not target.is_relative_to(base):
                    raise PathEscape(f"{path} goes through the symlink {part} to {target}, outside the worktree")
                if any(_is_git(p) for p in target.relative_to(base).parts):
                    raise PathEscape(f"{path} goes through the symlink {part} into .git, which is off limits")
                step = target
            current = step
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop before Python 3.13
        raise PathEscape(f"{path} cannot be resolved: {exc}") from exc
    return current
