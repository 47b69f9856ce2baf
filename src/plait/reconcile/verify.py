"""The repository's own verify command, and the integration worktree it runs in.

Detection looks at the tree being verified, in this order: pytest (a `tests/` folder with Python
files, or pytest configuration), `npm test` (a `test` script in package.json), `cargo test`,
`go test ./...`, `make test` (a `test:` target in the Makefile).
"""

from __future__ import annotations

import fcntl
import json
import re
import shlex
import shutil
from collections.abc import Callable, Collection
from pathlib import Path
from typing import BinaryIO

from plait.workspace import GitError, Repo
from plait.workspace.git import worktree_lock

__all__ = ["DETECTED_FROM", "KEEP_ON_CLEAN", "IntegrationWorktree", "detect_verify_command"]

KEEP_ON_CLEAN = (".venv", "venv", "node_modules", "target")
"""What a clean checkout keeps between commits: environments a bootstrap made, slow to remake."""

DETECTED_FROM = frozenset(
    {"pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "package.json", "Makefile", "makefile", "GNUmakefile"}
)
"""The files detection may read."""

_NPM_PLACEHOLDER = "no test specified"
_MAKE_TEST = re.compile(r"^test\s*:", re.MULTILINE)
_PYTEST_CONFIG = {
    "pytest.ini": "",
    "pyproject.toml": "[tool.pytest",
    "setup.cfg": "[tool:pytest]",
    "tox.ini": "[pytest]",
}


def _pytest(files: Collection[str], read: Callable[[str], str | None]) -> bool:
    if "conftest.py" in files or any(p.startswith("tests/") and p.endswith(".py") for p in files):
        return True
    for name, marker in _PYTEST_CONFIG.items():
        if name in files and marker in (read(name) or ""):
            return True
    return False


def _npm_test(read: Callable[[str], str | None]) -> bool:
    try:
        data = json.loads(read("package.json") or "{}")
    except json.JSONDecodeError:
        return False
    scripts = data.get("scripts") if isinstance(data, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and bool(test.strip()) and _NPM_PLACEHOLDER not in test


def detect_verify_command(files: Collection[str], read: Callable[[str], str | None], *, python: str) -> str | None:
    """The command that tests a tree holding `files` (read with `read`), or None when none is found.

    `python` runs pytest; the tree's `src/` and root come first on PYTHONPATH, so that tests import the
    tree's code and not a copy installed elsewhere.
    """
    if _pytest(files, read):
        paths = "$PWD/src:$PWD" if any(p.startswith("src/") for p in files) else "$PWD"
        return f'PYTHONPATH="{paths}${{PYTHONPATH:+:$PYTHONPATH}}" {shlex.quote(python)} -m pytest -q -x'
    if "package.json" in files and _npm_test(read):
        return "npm test"
    if "Cargo.toml" in files:
        return "cargo test"
    if "go.mod" in files:
        return "go test ./..."
    for name in ("Makefile", "makefile", "GNUmakefile"):
        if name in files and _MAKE_TEST.search(read(name) or ""):
            return "make test"
    return None


class IntegrationWorktree:
    """A detached worktree made once and moved from commit to commit, cleaned of everything but `keep`.

    With `shared` (one path per repository, alone in its folder), the worktree is kept between runs and only
    moved on the next time (`read-tree --reset -u` writes the files that differ): `remove` leaves it in place.
    A process holds it with a lock beside its folder; one that finds it held works in its own worktree at
    `path`, removed as before.
    """

    def __init__(
        self, repo: Repo, path: Path, *, keep: Collection[str] = KEEP_ON_CLEAN, shared: Path | None = None
    ) -> None:
        self.repo = repo
        self.path = path.absolute()
        self.keep = tuple(keep)
        self.shared = shared.absolute() if shared is not None else None
        self._made = False
        self._held: BinaryIO | None = None
        self._location: dict[str, str] = {}

    def checkout(self, commit: str) -> Path:
        """Make the worktree (first time) and check `commit` out in it, clean; returns its path.

        git finds the worktree's git directory in the shared `.git`, not through the `.git` link the worktree
        holds, which the commands run in it could rewrite.
        """
        if not self._made:
            self._open(commit)
            self._made = True
        self._git("read-tree", "--reset", "-u", commit)
        (Path(self._location["GIT_DIR"]) / "HEAD").write_text(f"{commit}\n")  # detached, without a git process
        excludes = [arg for name in self.keep for arg in ("-e", f"/{name}")]
        self._git("clean", "-q", "-f", "-f", "-d", "-x", *excludes)
        return self.path

    def _open(self, commit: str) -> None:
        """Take the shared worktree when no other process holds it, else this run's own; make it if need be."""
        if self.shared is not None:
            self.shared.parent.mkdir(parents=True, exist_ok=True)
            held = self.shared.parent.with_suffix(".lock").open("ab")
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                held.close()  # another run verifies in it now
            else:
                self._held, self.path = held, self.shared
        found = self._found()
        if found is None:
            self.repo.prune_worktrees()
            shutil.rmtree(self.path, ignore_errors=True)  # a half-made worktree a killed process left
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with worktree_lock(self.repo.common_dir):
                self.repo.git("worktree", "add", "--detach", "--force", "--no-checkout", str(self.path), commit)
            found = self.repo.location(self.path)
        else:
            (Path(found["GIT_DIR"]) / "index.lock").unlink(missing_ok=True)
        self._location = found

    def _found(self) -> dict[str, str] | None:
        """Where git keeps the worktree at `path`, when there is one."""
        if not self.path.is_dir():
            return None
        try:
            return self.repo.location(self.path)
        except GitError:
            return None

    def _git(self, *args: str) -> None:
        self.repo.git(*args, cwd=self.path, env=self._location)

    def remove(self) -> None:
        """Delete the worktree and git's record of it; a shared one is kept for the next run, and let go."""
        if self._held is not None:
            self._held.close()
            self._held, self._made = None, False
            return
        if self.path.exists():
            with worktree_lock(self.repo.common_dir):
                self.repo.git("worktree", "remove", "--force", "--force", str(self.path), check=False)
            shutil.rmtree(self.path, ignore_errors=True)  # what git would not remove (a half-made worktree)
            self.repo.prune_worktrees()
        self._made = False
