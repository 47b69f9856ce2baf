"""What one agent's commands may touch, in terms every OS layer can enforce."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Confinement"]


@dataclass(frozen=True)
class Confinement:
    """Read the system but `regions` and `hidden`; write only the worktree, the private `tmp` and `writable`.

    `regions` are hidden as a whole, whatever appears in them later (the user's home, the user's checkout, plait's
    own state, other worktrees, shared temporary directories); `visible` paths inside them are shown again,
    read-only (the shared `.git` the worktree needs, this worktree's own git admin directory, the interpreter and
    the tools on PATH). `hidden` paths (known secrets) stay hidden even inside a visible path. The shared git
    directory (`common_dir`) stays read-only even though the worktree lives inside it.
    """

    worktree: Path
    common_dir: Path
    tmp: Path
    home: Path
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    regions: tuple[Path, ...] = ()
    visible: tuple[Path, ...] = ()

    @property
    def home_dir(self) -> Path:
        """The agent's own throwaway home (HOME for its commands), inside its private tmp."""
        return self.tmp / "home"
