"""What one agent's commands may touch, in terms every OS layer can enforce."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Confinement"]


@dataclass(frozen=True)
class Confinement:
    """Read everything but `hidden`; write only the worktree, the private `tmp` and `writable`.

    The shared git directory (`common_dir`) stays read-only even though the worktree lives inside it.
    """

    worktree: Path
    common_dir: Path
    tmp: Path
    home: Path
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
