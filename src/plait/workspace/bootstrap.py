"""Make a fresh worktree ready for its agent: untracked files copied in, a setup command, its own ports."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plait.errors import EnvironmentProblem
from plait.globs import escapes
from plait.workspace.command import Shell

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
    """Run by the agent's own runner, so under the agent's sandbox and preset: it may come from the repository's
    `.plait.toml`, trusted or not, and so must have no more power than the agent's commands."""
    setup_timeout: float = 900.0

    def copy_includes(self, worktree: Path) -> list[str]:
        """Copy matching untracked files (never `.git`) into `worktree`; returns what was copied.

        Only files inside the checkout are copied, whoever wrote the pattern: a glob that is absolute or climbs
        with `..` is skipped, and so is a file reached through a symlink leading out (to `~/.ssh`, say) or one that
        would be written through a symlink in the worktree.
        """
        copied: list[str] = []
        inside, into = self.source.resolve(), worktree.resolve()
        for pattern in self.include:
            if escapes(pattern):
                continue
            for found in sorted(self.source.glob(pattern)):
                rel = found.relative_to(self.source)
                if ".git" in rel.parts or ".." in rel.parts or not found.is_file():
                    continue
                if not found.resolve().is_relative_to(inside):
                    continue
                target = worktree / rel
                if target.is_symlink() or not target.parent.resolve().is_relative_to(into):
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(found, target)
                copied.append(rel.as_posix())
        return copied

    async def run_setup(self, worktree: Path, runner: Shell) -> None:
        """Run the setup command; a failure is an `EnvironmentProblem` naming its last output line."""
        if not self.setup_command:
            return
        result = await runner.run(self.setup_command, cwd=worktree, timeout=self.setup_timeout, output_limit=4000)
        if result.exit_code != 0:
            tail = result.output.strip().splitlines()[-1:] or ["no output"]
            raise EnvironmentProblem(f"setup command `{self.setup_command}` failed in {worktree.name}: {tail[0]}")
