"""Checks after a command: the worktree's `.git` link left intact, and the sandbox's refusals spotted in the output."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Literal

__all__ = ["GitLink", "refusals"]

_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host|Name or service not known"
    r"|No address associated with hostname|getaddrinfo failed"
)
_FILES = re.compile(r"Read-only file system|Permission denied|Operation not permitted")
_MAX = 5


class GitLink:
    """The worktree's `.git` file, which points git at the shared directory: a command must not redirect it."""

    def __init__(self, worktree: Path) -> None:
        self.path = worktree / ".git"
        self._content = self.path.read_bytes() if self.path.is_file() and not self.path.is_symlink() else None

    def restore(self) -> bool:
        """Put the link back if a command changed, removed or replaced it; True if it had to."""
        if self._content is None:
            return False
        try:
            if self.path.is_file() and not self.path.is_symlink() and self.path.read_bytes() == self._content:
                return False
        except OSError:
            pass
        if self.path.is_dir() and not self.path.is_symlink():
            shutil.rmtree(self.path)
        else:
            self.path.unlink(missing_ok=True)
        self.path.write_bytes(self._content)
        return True


def refusals(output: str) -> list[tuple[Literal["network", "command"], str]]:
    """(kind, line) for the first lines of `output` that look like the sandbox refusing a file or network access.

    A heuristic for the record: the same messages come from ordinary failures too.
    """
    found: list[tuple[Literal["network", "command"], str]] = []
    for line in output.splitlines():
        if _NETWORK.search(line):
            found.append(("network", line.strip()[:300]))
        elif _FILES.search(line):
            found.append(("command", line.strip()[:300]))
        if len(found) >= _MAX:
            break
    return found
