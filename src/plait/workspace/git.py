"""The git CLI on the user's repository and agents' worktrees, run so that it never runs code a worktree set up.

See `gitcall` for what every git plait starts is given, and `_gitstage` for staging and merging.
"""

from __future__ import annotations

import functools
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from plait.errors import EnvironmentProblem
from plait.workspace import _gitstage
from plait.workspace._gitmsg import stripspace
from plait.workspace._worktrees import clear_ref_lock, drop, refresh_saved, register, worktree_lock
from plait.workspace._worktrees import remove as remove_worktree
from plait.workspace.gitcall import GitError, first_line, run

__all__ = ["PLAIT_IDENTITY", "GitError", "Repo", "Worktree", "worktree_lock"]

PLAIT_IDENTITY: Mapping[str, str] = {
    "GIT_AUTHOR_NAME": "plait",
    "GIT_AUTHOR_EMAIL": "plait@localhost",
    "GIT_COMMITTER_NAME": "plait",
    "GIT_COMMITTER_EMAIL": "plait@localhost",
}
"""The identity of every commit plait makes, so committing works where no git user is configured."""


@dataclass(frozen=True)
class Repo:
    """The user's repository: `root` is the top of its work tree, `common_dir` the `.git` all worktrees share."""

    root: Path
    common_dir: Path

    @classmethod
    def discover(cls, path: Path) -> Repo:
        """The repository containing `path`; raises `EnvironmentProblem` when there is none or it has no commits."""
        start = path if path.is_dir() else path.parent
        # one git process: the top, the shared git directory (relative to `start`), then HEAD's commit if any
        found = run(("rev-parse", "--show-toplevel", "--git-common-dir", "--verify", "--quiet", "HEAD^{commit}"), start)
        lines = found.stdout.splitlines()
        if found.returncode not in (0, 1) or len(lines) < 2 or not lines[0].strip():
            raise EnvironmentProblem(
                f"{path} is not inside a git repository: run plait from a git checkout, or `git init` first"
            )
        root = Path(lines[0].strip())
        repo = cls(root=root, common_dir=(start / lines[1].strip()).resolve())
        if found.returncode != 0 or len(lines) < 3:
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
        done = run(args, cwd or self.root, env, input)
        if check and done.returncode != 0:
            raise GitError(shlex.join(args), first_line(done.stderr, f"exit status {done.returncode}"))
        return done.stdout

    def is_ancestor(self, commit: str, of: str) -> bool:
        """Whether `commit` is `of` or one of its ancestors (False too when either is unknown)."""
        return run(("merge-base", "--is-ancestor", commit, of), self.root).returncode == 0

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
            self.stage_all(self.root, env=env, excludes=())
            tree = self.git("write-tree", env=env).strip()
        sha = self.git("commit-tree", tree, "-p", head, env=PLAIT_IDENTITY, input=message).strip()
        self.git("update-ref", f"refs/plait/snapshots/{sha}", sha)
        return sha

    def stage_all(self, work_tree: Path, *, env: Mapping[str, str], excludes: tuple[str, ...]) -> list[str]:
        """`git add --all` in `work_tree` that never enters another repository; returns the nested ones left out.

        See `_gitstage.stage_all`; `excludes` are globs of paths never staged.
        """
        return _gitstage.stage_all(self, work_tree, env, excludes)

    def nested_repositories(
        self, work_tree: Path, *, env: Mapping[str, str] | None = None, populated: bool = True
    ) -> list[str]:
        """Directories of `work_tree` that are git repositories of their own, which plait's commits leave out.

        New ones (git lists them as untracked directories), and with `populated` also submodules someone filled.
        """
        return _gitstage.nested_repositories(self, work_tree, env or self.location(work_tree), populated=populated)

    def location(self, work_tree: Path) -> dict[str, str]:
        """GIT_DIR and GIT_WORK_TREE for git in `work_tree`, this repository's main work tree or one of its worktrees.

        The git directory comes from git's records in the shared `.git`, never from the work tree's own `.git`:
        whoever works in a worktree can rewrite that file, and with it the configuration git would read.
        """
        return {"GIT_DIR": str(_gitstage.git_dir(self, work_tree)), "GIT_WORK_TREE": str(work_tree)}

    def merge_trees(self, ours: str, theirs: str) -> tuple[str, list[str]]:
        """git's merge of two commits, touching no work tree, index or ref: the merged tree and the conflicted paths.

        It runs in a scratch work tree holding only the `.gitattributes` files of `ours`, so merge attributes apply
        as `ours` sets them and no repository inside anyone's work tree (a submodule, a nested one) is opened.
        """
        return _gitstage.merge_trees(self, ours, theirs)

    def plait_dir(self) -> Path:
        """plait's own directory inside the shared `.git`, created on first use."""
        path = self.common_dir / "plait"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def branch_exists(self, name: str) -> bool:
        """Whether a local branch of that name exists."""
        return bool(self.git("rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False).strip())

    def has_commit(self, sha: str) -> bool:
        """Whether the commit `sha` is in this repository's objects."""
        return bool(self.git("rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}", check=False).strip())

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
        sha, path = self.git("rev-parse", "--verify", f"{base}^{{commit}}").strip(), path.absolute()
        self.git("branch", "--no-track", "--", branch, sha)
        try:
            with worktree_lock(self.common_dir):
                register(self.common_dir, path, f"ref: refs/heads/{branch}")
        except OSError as exc:  # a path in the way: nothing is left
            self.git("branch", "-D", "--", branch, check=False)
            raise GitError(f"worktree add -b {branch}", str(exc)) from exc
        return self._checked_out(Worktree(path=path, branch=branch, base=sha, repo=self))

    def readd_worktree(self, path: Path, branch: str, base: str, *, owned: str = "") -> Worktree:
        """A worktree at `path` on `branch` reset to `base`, whatever a killed process left there.

        With `owned` (a prefix of plait's own branches, `plait/<run>/`), a lock file a killed git left on the
        branch is removed first; the branch must be under it.
        """
        path = path.absolute()
        sha = self.git("rev-parse", "--verify", f"{base}^{{commit}}").strip()
        with worktree_lock(self.common_dir):
            self.drop_worktree(path)
            if owned:
                clear_ref_lock(self.common_dir, branch, owned=owned)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.git("worktree", "add", "--quiet", "--force", "-B", branch, "--no-checkout", str(path), sha)
        return self._checked_out(Worktree(path=path, branch=branch, base=sha, repo=self))

    @staticmethod
    def _checked_out(worktree: Worktree) -> Worktree:
        """The files of a worktree whose records were just made, checked out as `worktree add` would, outside
        `worktree_lock` (only git's bookkeeping of a new worktree needs it; the checkout is most of its time)."""
        worktree._git("reset", "--hard", "--no-recurse-submodules", "--quiet")
        return worktree

    def worktrees(self) -> list[Path]:
        """Every worktree of the repository, the main one first."""
        out = self.git("worktree", "list", "--porcelain")
        return [Path(line.removeprefix("worktree ")) for line in out.splitlines() if line.startswith("worktree ")]

    def drop_worktree(self, path: Path) -> None:
        """Delete a worktree and git's record of it, even one a killed `worktree add` left; see `_worktrees.drop`."""
        drop(self.root, path)

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

    @functools.cached_property
    def _location(self) -> dict[str, str]:
        return self.repo.location(self.path)

    def _git(
        self, *args: str, env: Mapping[str, str] | None = None, input: str | None = None, check: bool = True
    ) -> str:
        return self.repo.git(*args, cwd=self.path, env={**self._location, **(env or {})}, input=input, check=check)

    def _stage(self, env: Mapping[str, str] | None = None) -> list[str]:
        return self.repo.stage_all(self.path, env={**self._location, **(env or {})}, excludes=CACHE_PATTERNS)

    def nested_repositories(self) -> list[str]:
        """Directories here that are git repositories of their own (new ones, filled submodules): never committed."""
        return self.repo.nested_repositories(self.path, env=self._location)

    def commit_all(self, message: str) -> str | None:
        """Stage and commit every change as plait; return the new sha, or None when nothing changed.

        Plumbing only (write-tree, commit-tree, update-ref): `git commit` would look at the work tree again.
        """
        self._stage()
        tree = self._git("write-tree").strip()
        head, head_tree = self._git("rev-parse", "HEAD^{commit}", "HEAD^{tree}").split()
        if tree == head_tree:
            return None
        text = stripspace(message)  # the clean-up `git commit -F` makes
        sha = self._git("commit-tree", tree, "-p", head, env=PLAIT_IDENTITY, input=text).strip()
        subject = next(iter(text.splitlines()), "")
        self._git("update-ref", "-m", f"commit: {subject}", "HEAD", sha, head)
        return sha

    def checkpoint(self, ref: str, parent: str) -> str | None:
        """Commit the worktree's files (not its branch) to `ref` when they differ from `parent`; else None.

        A temporary index keeps the worktree's own index and branch as they are. When the branch has moved
        past `parent` (a merge brought integrated work in), the checkpoint goes on from the branch's head, so
        that a worktree restored from it has that merge in its history too.
        """
        head, parent_tree = self._git("rev-parse", "HEAD^{commit}", f"{parent}^{{tree}}").split()
        moved = head != parent and not self.repo.is_ancestor(head, parent)
        if moved:
            parent, parent_tree = head, self._git("rev-parse", f"{head}^{{tree}}").strip()
        tree = self.tree(parent)
        if tree == parent_tree:
            if not moved:
                return None
            sha = head
        else:
            sha = self._git("commit-tree", tree, "-p", parent, "-m", _CHECKPOINT, env=PLAIT_IDENTITY).strip()
        self._git("update-ref", ref, sha)
        return sha

    def tree(self, start: str = "HEAD") -> str:
        """The worktree's files as a git tree (tool caches and nested repositories left out), via a temporary index:
        plait's saved index (not the agent's) moved to `start`, so that files it matches are not hashed again."""
        with tempfile.TemporaryDirectory(prefix="plait-tree-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            try:  # with its time, which tells git which entries it cannot trust
                shutil.copy2(refresh_saved(Path(self._location["GIT_DIR"]), self.path), env["GIT_INDEX_FILE"])
                self._git("read-tree", "-m", start, env=env)
            except (OSError, GitError):
                self._git("read-tree", start, env=env)
            self._stage(env)
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
        """Merge `commit` into the branch, keeping the worktree's uncommitted changes uncommitted on top (no commit of
        unfinished work stays on the branch); returns the conflicted paths: then the worktree is left as it was.
        git's merge runs outside the worktree (`Repo.merge_trees`), then `read-tree` checks it out."""
        before = self.head()
        saved = self.commit_all(f"Work in progress, kept through the merge of {commit[:10]}\n")
        conflicts: list[str] | None = None
        try:
            conflicts = self._merge(commit, message)
        finally:  # the branch goes back before the unfinished work, or on to the merge made without it
            if saved:
                self._git("reset", "--quiet", before if conflicts != [] else self._without(before, commit, message))
        return conflicts

    def _without(self, before: str, commit: str, message: str) -> str:
        if self.repo.is_ancestor(commit, before) or self.repo.is_ancestor(before, commit):
            return before if self.repo.is_ancestor(commit, before) else commit
        tree, conflicts = self.repo.merge_trees(before, commit)
        tree = self._git("rev-parse", "HEAD^{tree}").strip() if conflicts else tree  # the work made it merge
        text = stripspace(message)
        return self._git("commit-tree", tree, "-p", before, "-p", commit, env=PLAIT_IDENTITY, input=text).strip()

    def _merge(self, commit: str, message: str) -> list[str]:
        ours = self.head()
        if self.repo.is_ancestor(commit, ours):
            return []
        if self.repo.is_ancestor(ours, commit):
            self._move(ours, commit, f"merge {commit[:10]}: Fast-forward")
            return []
        tree, conflicts = self.repo.merge_trees(ours, commit)
        if conflicts:
            return conflicts
        text = stripspace(message)
        sha = self._git("commit-tree", tree, "-p", ours, "-p", commit, env=PLAIT_IDENTITY, input=text).strip()
        self._move(ours, sha, f"merge {commit[:10]}: Merge made by plait")
        return []

    def _move(self, old: str, new: str, reason: str) -> None:
        """Check `new` out over `old` (files and index), then point the branch at it."""
        self._git("read-tree", "-m", "-u", old, new)
        self._git("update-ref", "-m", reason, "HEAD", new, old)

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
        return self._git("diff", "--no-color", *mode, since, "HEAD", "--")

    def head(self) -> str:
        """The sha of this worktree's HEAD."""
        return self._git("rev-parse", "--verify", "HEAD^{commit}").strip()

    def remove(self, delete_branch: bool = False) -> None:
        """Delete the worktree's directory and git's record of it; optionally its branch too."""
        remove_worktree(self.repo.root, self.repo.common_dir, self.path)
        if delete_branch and self.repo.branch_exists(self.branch):
            self.repo.delete_branch(self.branch)
