"""The repository's own verify command, and the integration worktree it runs in.

Detection looks at the tree being verified, in this order: pytest (a `tests/` folder with Python
files, or pytest configuration), `npm test` (a `test` script in package.json), `cargo test`,
`go test ./...`, `make test` (a `test:` target in the Makefile).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable, Collection
from pathlib import Path

from plait.workspace import GitError, Repo
from plait.workspace.git import worktree_lock

__all__ = ["KEEP_ON_CLEAN", "IntegrationWorktree", "detect_verify_command"]

KEEP_ON_CLEAN = (".venv", "venv", "node_modules", "target")
"""What a clean checkout keeps between commits: environments a bootstrap made, slow to remake."""

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
    """A detached worktree made once and moved from commit to commit, cleaned of everything but `keep`."""

    def __init__(self, repo: Repo, path: Path, *, keep: Collection[str] = KEEP_ON_CLEAN) -> None:
        self.repo = repo
        self.path = path.absolute()
        self.keep = tuple(keep)
        self._made = False
        self._location: dict[str, str] = {}

    def checkout(self, commit: str) -> Path:
        """Make the worktree (first time) and check `commit` out in it, clean; returns its path.

        git finds the worktree's git directory in the shared `.git`, not through the `.git` link the worktree
        holds, which the commands run in it could rewrite.
        """
        if not self._made:
            self.repo.prune_worktrees()
            try:
                self._location = self.repo.location(self.path)
            except GitError:
                shutil.rmtree(self.path, ignore_errors=True)  # a half-made worktree a killed process left
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with worktree_lock(self.repo.common_dir):
                    self.repo.git("worktree", "add", "--detach", "--force", str(self.path), commit)
                self._location = self.repo.location(self.path)
            else:
                (Path(self._location["GIT_DIR"]) / "index.lock").unlink(missing_ok=True)
            self._made = True
        self._git("checkout", "--quiet", "--detach", "--force", commit)
        excludes = [arg for name in self.keep for arg in ("-e", f"/{name}")]
        self._git("clean", "-q", "-f", "-f", "-d", "-x", *excludes)
        return self.path

    def _git(self, *args: str) -> None:
        self.repo.git(*args, cwd=self.path, env=self._location)

    def remove(self) -> None:
        """Delete the worktree and git's record of it."""
        if self.path.exists():
            with worktree_lock(self.repo.common_dir):
                self.repo.git("worktree", "remove", "--force", "--force", str(self.path), check=False)
            shutil.rmtree(self.path, ignore_errors=True)  # what git would not remove (a half-made worktree)
        self.repo.prune_worktrees()
        self._made = False
