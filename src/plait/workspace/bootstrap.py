"""Make a fresh worktree ready for its agent: untracked files copied in, a setup command, its own ports."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plait.errors import EnvironmentProblem
from plait.workspace.command import CommandRunner

__all__ = ["PORT_FLOOR", "Bootstrap", "include_patterns", "port_env"]

PORT_FLOOR = 20000


def include_patterns(repo_root: Path, configured: Sequence[str]) -> list[str]:
    """Globs from settings and from the repository's `.worktreeinclude` (one per line, # comments)."""
    patterns = list(configured)
    listing = repo_root / ".worktreeinclude"
    if listing.is_file():
        for line in listing.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                patterns.append(line)
    return patterns


def port_env(slot: int, block: int) -> dict[str, str]:
    """Environment naming the block of ports reserved for one agent."""
    base = PORT_FLOOR + slot * block
    return {"PLAIT_PORT_BASE": str(base), "PLAIT_PORT_COUNT": str(block), "PORT": str(base)}


@dataclass(frozen=True)
class Bootstrap:
    """What to do to every new worktree of a run."""

    source: Path
    """The user's checkout, where untracked files are copied from."""
    include: tuple[str, ...] = ()
    setup_command: str | None = None
    setup_timeout: float = 900.0

    def copy_includes(self, worktree: Path) -> list[str]:
        """Copy matching untracked files (never `.git`) into `worktree`; returns what was copied."""
        copied: list[str] = []
        for pattern in self.include:
            for found in sorted(self.source.glob(pattern)):
                rel = found.relative_to(self.source)
                if ".git" in rel.parts or not found.is_file():
                    continue
                target = worktree / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(found, target)
                copied.append(rel.as_posix())
        return copied

    async def run_setup(self, worktree: Path, runner: CommandRunner) -> None:
        """Run the setup command; a failure is an `EnvironmentProblem` naming its last output line."""
        if not self.setup_command:
            return
        result = await runner.run(self.setup_command, cwd=worktree, timeout=self.setup_timeout, output_limit=4000)
        if result.exit_code != 0:
            tail = result.output.strip().splitlines()[-1:] or ["no output"]
            raise EnvironmentProblem(f"setup command `{self.setup_command}` failed in {worktree.name}: {tail[0]}")
