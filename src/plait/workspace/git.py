"""The git CLI, run so that no repository hook ever fires: the user's repository and agents' worktrees."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from plait.errors import EnvironmentProblem, PlaitError

__all__ = ["PLAIT_IDENTITY", "GitError", "Repo", "Worktree"]

PLAIT_IDENTITY: Mapping[str, str] = {
    "GIT_AUTHOR_NAME": "plait",
    "GIT_AUTHOR_EMAIL": "plait@localhost",
    "GIT_COMMITTER_NAME": "plait",
    "GIT_COMMITTER_EMAIL": "plait@localhost",
}
"""The identity of every commit plait makes, so committing works where no git user is configured."""

_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgsign=false",
)
_INHERITED_GIT_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


class GitError(PlaitError):
    """A git command failed; the message names the command and git's first line of complaint."""

    exit_code = 3

    def __init__(self, command: str, detail: str) -> None:
        super().__init__(f"git {command} failed: {detail}")
        self.command = command
        self.detail = detail


def _first_line(text: str, fallback: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), fallback)


def _environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_GIT_VARS}
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_PAGER="cat", GIT_OPTIONAL_LOCKS="0")
    env.update(extra or {})
    return env


def _run(
    args: tuple[str, ...], cwd: Path, env: Mapping[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *_CONFIG, *args],
            cwd=cwd,
            env=_environment(env),
            input=input,
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError as exc:
        if shutil.which("git") is None:
            raise EnvironmentProblem("git is not installed or not on PATH: install git and try again") from exc
        raise EnvironmentProblem(f"{cwd} does not exist: run plait from a git checkout") from exc
    except OSError as exc:
        raise GitError(shlex.join(args), str(exc)) from exc


_THREADS = threading.Lock()


@contextlib.contextmanager
def worktree_lock(common_dir: Path) -> Iterator[None]:
    """Serialise git's worktree bookkeeping: concurrent `worktree add` runs read each other's half-written state.

    A thread lock for the agents of this process, a file lock for other plait processes on the repository.
    """
    path = common_dir / "plait" / "worktrees.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _THREADS, path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Repo:
    """The user's repository: `root` is the top of its work tree, `common_dir` the `.git` all worktrees share."""

    root: Path
    common_dir: Path

    @classmethod
    def discover(cls, path: Path) -> Repo:
        """The repository containing `path`; raises `EnvironmentProblem` when there is none or it has no commits."""
        start = path if path.is_dir() else path.parent
        top = _run(("rev-parse", "--show-toplevel"), start)
        if top.returncode != 0 or not top.stdout.strip():
            raise EnvironmentProblem(
                f"{path} is not inside a git repository: run plait from a git checkout, or `git init` first"
            )
        root = Path(top.stdout.strip())
        common = _run(("rev-parse", "--git-common-dir"), root)
        if common.returncode != 0:
            raise GitError("rev-parse --git-common-dir", _first_line(common.stderr, "no common dir"))
        repo = cls(root=root, common_dir=(root / common.stdout.strip()).resolve())
        if _run(("rev-parse", "--verify", "--quiet", "HEAD^{commit}"), root).returncode != 0:
            raise EnvironmentProblem(
                f"the repository at {root} has no commits yet: "
                "commit something first, plait starts agents from a commit"
            )
        return repo

    def git(
        self,
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        check: bool = True,
    ) -> str:
        """Run git with hooks disabled and no prompts; return stdout, raising `GitError` on failure if `check`."""
        done = _run(args, cwd or self.root, env, input)
        if check and done.returncode != 0:
            raise GitError(shlex.join(args), _first_line(done.stderr, f"exit status {done.returncode}"))
        return done.stdout

    def is_ancestor(self, commit: str, of: str) -> bool:
        """Whether `commit` is `of` or one of its ancestors (False too when either is unknown)."""
        return _run(("merge-base", "--is-ancestor", commit, of), self.root).returncode == 0

    def head(self) -> str:
        """The sha of HEAD."""
        return self.git("rev-parse", "--verify", "HEAD^{commit}").strip()

    def head_ref(self) -> str:
        """The current branch name, or "HEAD" when detached."""
        return self.git("symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip() or "HEAD"

    def dirty_paths(self) -> list[str]:
        """Paths with uncommitted changes, untracked files included and ignored ones not."""
        out = self.git("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
        return [entry[3:] for entry in out.split("\0") if len(entry) > 3]

    def snapshot(self, message: str) -> str:
        """Commit the work tree as it is, untracked files included, without touching the index, files or branches.

        The commit's parent is HEAD; a ref under `refs/plait/snapshots/` keeps it from being collected.
        """
        head = self.head()
        index = Path(self.git("rev-parse", "--git-path", "index").strip())
        index = index if index.is_absolute() else self.root / index
        with tempfile.TemporaryDirectory(dir=self.plait_dir(), prefix="snapshot-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            try:
                # A copy of the user's index keeps its stat data (so add -A is fast) and its sparse-checkout bits.
                shutil.copyfile(index, env["GIT_INDEX_FILE"])
            except OSError:
                self.git("read-tree", head, env=env)
            self.git("add", "--all", "--", ".", env=env)
            tree = self.git("write-tree", env=env).strip()
        sha = self.git("commit-tree", tree, "-p", head, env=PLAIT_IDENTITY, input=message).strip()
        self.git("update-ref", f"refs/plait/snapshots/{sha}", sha)
        return sha

    def plait_dir(self) -> Path:
        """plait's own directory inside the shared `.git`, created on first use."""
        path = self.common_dir / "plait"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def branch_exists(self, name: str) -> bool:
        """Whether a local branch of that name exists."""
        return bool(self.git("rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False).strip())

    def delete_branch(self, name: str) -> None:
        """Delete a local branch, merged or not."""
        self.git("branch", "-D", "--", name)

    def add_worktree(self, path: Path, branch: str, base: str) -> Worktree:
        """Check out a new branch `branch` at `base` in a new worktree at `path`."""
        if self.branch_exists(branch):
            raise GitError(
                f"worktree add -b {branch}",
                f"branch '{branch}' already exists: pick another name or delete it with `git branch -D {branch}`",
            )
        sha = self.git("rev-parse", "--verify", f"{base}^{{commit}}").strip()
        path = path.absolute()
        with worktree_lock(self.common_dir):
            self.git("worktree", "add", "--quiet", "-b", branch, str(path), sha)
        return Worktree(path=path, branch=branch, base=sha, repo=self)

    def readd_worktree(self, path: Path, branch: str, base: str) -> Worktree:
        """A worktree at `path` on `branch` reset to `base`, whatever a killed process left there."""
        path = path.absolute()
        sha = self.git("rev-parse", "--verify", f"{base}^{{commit}}").strip()
        with worktree_lock(self.common_dir):
            if path in self.worktrees():
                self.git("worktree", "remove", "--force", "--force", str(path))
            elif path.exists():
                shutil.rmtree(path)
            self.git("worktree", "prune")
            path.parent.mkdir(parents=True, exist_ok=True)
            self.git("worktree", "add", "--quiet", "--force", "-B", branch, str(path), sha)
        return Worktree(path=path, branch=branch, base=sha, repo=self)

    def worktrees(self) -> list[Path]:
        """Every worktree of the repository, the main one first."""
        out = self.git("worktree", "list", "--porcelain")
        return [Path(line.removeprefix("worktree ")) for line in out.splitlines() if line.startswith("worktree ")]

    def prune_worktrees(self) -> None:
        """Forget worktrees whose directories are gone."""
        with worktree_lock(self.common_dir):
            self.git("worktree", "prune")


CACHE_PATTERNS = (
    "**/__pycache__/**",
    "**/*.py[co]",
    "**/.pytest_cache/**",
    "**/.mypy_cache/**",
    "**/.ruff_cache/**",
    "**/.DS_Store",
)
"""Tool caches an agent's commands leave behind; never committed, even where .gitignore forgets them."""

_CHECKPOINT = "plait checkpoint"
"""The message of every checkpoint commit, which tells them from the branch's own commits."""


@dataclass(frozen=True)
class Worktree:
    """An agent's checkout: its own directory and branch, started at commit `base`."""

    path: Path
    branch: str
    base: str
    repo: Repo

    def _git(
        self, *args: str, env: Mapping[str, str] | None = None, input: str | None = None, check: bool = True
    ) -> str:
        return self.repo.git(*args, cwd=self.path, env=env, input=input, check=check)

    def commit_all(self, message: str) -> str | None:
        """Stage and commit every change as plait; return the new sha, or None when nothing changed."""
        self._git("add", "--all", "--", ".", *(f":(exclude,glob){pattern}" for pattern in CACHE_PATTERNS))
        if not self._git("diff", "--cached", "--name-only", "--no-renames").strip():
            return None
        self._git(
            "commit", "--quiet", "--no-verify", "--allow-empty-message", "-F", "-", env=PLAIT_IDENTITY, input=message
        )
        return self.head()

    def checkpoint(self, ref: str, parent: str) -> str | None:
        """Commit the worktree's files (not its branch) to `ref` when they differ from `parent`; else None.

        A temporary index keeps the worktree's own index and branch as they are. When the branch has moved
        past `parent` (a merge brought integrated work in), the checkpoint goes on from the branch's head, so
        that a worktree restored from it has that merge in its history too.
        """
        head = self.head()
        moved = not self.repo.is_ancestor(head, parent)
        parent = head if moved else parent
        tree = self.tree(parent)
        if tree == self._git("rev-parse", f"{parent}^{{tree}}").strip():
            if not moved:
                return None
            sha = head
        else:
            sha = self._git("commit-tree", tree, "-p", parent, "-m", _CHECKPOINT, env=PLAIT_IDENTITY).strip()
        self._git("update-ref", ref, sha)
        return sha

    def tree(self, start: str = "HEAD") -> str:
        """The worktree's files as a git tree (tool caches left out), written through a temporary index."""
        with tempfile.TemporaryDirectory(prefix="plait-tree-") as tmp:
            env = {**PLAIT_IDENTITY, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git("read-tree", start, env=env)
            excludes = (f":(exclude,glob){pattern}" for pattern in CACHE_PATTERNS)
            self._git("add", "--all", "--", ".", *excludes, env=env)
            return self._git("write-tree", env=env).strip()

    def restore(self, checkpoint: str) -> None:
        """Make the worktree's files those of `checkpoint`, and its branch the last real commit under it.

        Checkpoints stack on the branch's commits; a merge made during the attempt is one of those, so the
        branch is put back on it and the work after it shows as uncommitted changes, as it was.
        """
        self._git("read-tree", "-u", "--reset", checkpoint)
        grep = f"--grep=^{_CHECKPOINT}$"
        commit = self._git("rev-list", "--first-parent", "--invert-grep", grep, "-n", "1", checkpoint).strip()
        self._git("reset", "--quiet", commit or "HEAD")

    def merge_in(self, commit: str, message: str) -> list[str]:
        """Merge `commit` into the branch, committing the worktree's own changes first so they are kept.

        Returns the paths that conflicted; then nothing is merged and the worktree is left as it was.
        """
        before = self.head()
        saved = self.commit_all(f"Work in progress, kept through the merge of {commit[:10]}\n")
        done = _run(("merge", "--no-edit", "-m", message, commit), self.path, PLAIT_IDENTITY)
        if done.returncode == 0:
            return []
        conflicts = [p for p in self._git("diff", "--name-only", "--diff-filter=U", "-z").split("\0") if p]
        if self._git("rev-parse", "--verify", "--quiet", "MERGE_HEAD", check=False).strip():
            self._git("merge", "--abort")
        if saved:
            self._git("reset", "--quiet", before)  # the saved work goes back to being uncommitted changes
        if not conflicts:
            raise GitError(f"merge {commit}", _first_line(done.stderr + done.stdout, f"exit status {done.returncode}"))
        return conflicts

    def lacks(self, commit: str, path: str) -> bool:
        """Whether `commit` changed `path` in a way the branch does not have yet (since their merge base)."""
        if self.repo.is_ancestor(commit, self.head()):
            return False
        since = self._git("merge-base", "HEAD", commit).strip()
        changed = self._git("diff", "--name-only", "--no-renames", since, commit, "--", path)
        return bool(changed.strip())

    def changed_between(self, old: str, new: str) -> list[str]:
        """Paths that differ between two commits or trees."""
        out = self._git("diff", "--name-only", "-z", "--no-renames", old, new, "--")
        return [name for name in out.split("\0") if name]

    def put_back(self, tree: str, paths: list[str]) -> None:
        """Make `paths` in the worktree's files as they are in `tree`: restored, or removed when not there."""
        for path in paths:
            if self._git("ls-tree", "--name-only", tree, "--", path, check=False).strip():
                self._git("restore", f"--source={tree}", "--worktree", "--", path)
            else:
                (self.path / path).unlink(missing_ok=True)

    def changed_files(self, since: str) -> list[str]:
        """Paths that differ between commit `since` and HEAD (both sides of a rename)."""
        out = self._git("diff", "--name-only", "-z", "--no-renames", since, "HEAD", "--")
        return [name for name in out.split("\0") if name]

    def diff(self, since: str, stat: bool = False) -> str:
        """The diff from commit `since` to HEAD, or its `--stat` summary."""
        mode = ("--stat",) if stat else ()
        return self._git("diff", "--no-color", "--no-ext-diff", "--no-textconv", *mode, since, "HEAD", "--")

    def head(self) -> str:
        """The sha of this worktree's HEAD."""
        return self._git("rev-parse", "--verify", "HEAD^{commit}").strip()

    def remove(self, delete_branch: bool = False) -> None:
        """Delete the worktree's directory and git's record of it; optionally its branch too."""
        with worktree_lock(self.repo.common_dir):
            if self.path.exists():
                self.repo.git("worktree", "remove", "--force", "--force", str(self.path))
            self.repo.git("worktree", "prune")
        if delete_branch and self.repo.branch_exists(self.branch):
            self.repo.delete_branch(self.branch)
