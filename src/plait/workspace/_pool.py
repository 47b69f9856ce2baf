"""A run's pool of worktrees: a finished attempt's worktree is handed, cleaned, to the next attempt of the run.

Making a worktree writes every file of the repository, and removing it deletes them again. A pooled worktree
becomes the next attempt's by writing only what differs: the files that differ between the two commits, and
those the last agent changed, made or left behind.

    give_back: HEAD detached ──► moved: <attempt> to <run>/.pool-<id>
    take:      moved: <run>/.pool-<id> to <attempt> ──► recycled ──► the attempt's branch checked out

Free worktrees wait in the run's own directory of worktrees, where the run's clean-up (`tidy_run`, `plait gc`)
removes them with the rest. Both moves hold `worktree_lock`, so a worktree is in the pool or at one attempt's
path, never both. A process killed while recycling leaves a half-made worktree at the attempt's path: the
resumed process drops it and makes the worktree again (see `plait.run._opening`), as after a killed
`worktree add`.

Recycling trusts nothing the last agent left: git's files of the worktree other than its records of where it
is (`_KEEP`) are deleted (reflog, ORIG_HEAD, a merge or rebase in progress, per-worktree refs and config), and
the index is replaced by the copy saved when the worktree last matched a commit (so nothing the agent staged or
flagged as assume-unchanged survives). Which files then differ from the new commit is known without a walk of
the whole tree: when a worktree is handed back, once its agent has finished, one `ls-files` against that saved
index records what the agent left (files it changed or deleted, and every path git does not track: new files,
ignored build output, nested repositories, empty directories). Taking it, those untracked paths are deleted,
the index entries of the paths that differ between the two commits (one `diff-tree`) are replaced, and those
paths and the ones the agent changed are written from the index (`checkout-index`). A worktree without that
record, or one a link or a changed submodule makes it unsafe for, is recycled the long way: `read-tree --reset
-u` over every file, then `clean -ffdx` of the whole tree.

The record is read from the worktree as the agent's attempt ended: anything written into it later (a process the
agent left running) is not seen.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from plait.workspace._worktrees import REFRESHED, SAVED_INDEX, drop, refresh_saved, worktree_lock
from plait.workspace.git import Repo, Worktree
from plait.workspace.gitcall import GitError, run

__all__ = ["POOLED", "adopt", "empty", "give_back", "recycled", "take"]

POOLED = ".pool-"
"""The name prefix of a free worktree in a run's directory of worktrees."""

_PRISTINE = SAVED_INDEX
"""The index saved in a pooled worktree's git directory when its files last matched a commit."""

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

_LEFT = "plait-left"
"""What the last agent left in a pooled worktree: its base commit, then `ls-files -t` of what differs from it."""

_KEEP = frozenset({"commondir", "gitdir", "HEAD", "index", _PRISTINE, REFRESHED})


def adopt(worktree: Worktree) -> None:
    """Make a just-checked-out worktree poolable: save its index as it is while the files match its commit."""
    admin = _admin(worktree.repo, worktree.path)
    shutil.copy2(admin / "index", admin / _PRISTINE)


def give_back(worktree: Worktree, pool: Path) -> bool:
    """Put a finished attempt's worktree in `pool`, its branch let go; False when it is not poolable (then
    the caller removes it)."""
    repo = worktree.repo
    try:
        admin = _admin(repo, worktree.path)
    except GitError:
        return False
    if not (admin / _PRISTINE).is_file():
        return False
    (admin / "HEAD").write_text(f"{worktree.base}\n")  # detached: the branch can be deleted or checked out
    # files written in the second the saved index was would be hashed again at every hand-back: their stat
    # data is brought up to date where their contents still match (an edited file's entry stays stale)
    refresh_saved(admin, worktree.path)  # once after a checkout of every file; a recycling writes only a few
    env = {**repo.location(worktree.path), "GIT_INDEX_FILE": str(admin / _PRISTINE)}
    left = run(("ls-files", "-z", "-t", "--modified", "--deleted", "--others", "--directory"), worktree.path, env)
    (admin / _LEFT).unlink(missing_ok=True)
    if left.returncode == 0:
        (admin / _LEFT).write_text(f"{worktree.base}\0{left.stdout}", errors="surrogateescape")
    with worktree_lock(repo.common_dir):
        return _move(admin, worktree.path, pool / f"{POOLED}{admin.name}")


def take(repo: Repo, pool: Path, path: Path, branch: str, base: str, *, force: bool) -> Worktree | None:
    """A worktree from `pool` at `path`, on a new branch `branch` at `base` (reset when `force`), as a fresh
    one would be; None when the pool is empty or the worktree could not be recycled (nothing is left at `path`)."""
    path = path.absolute()
    with worktree_lock(repo.common_dir):
        taken = False
        for free in sorted(pool.glob(f"{POOLED}*")) if pool.is_dir() else []:
            if _move(repo.common_dir / "worktrees" / free.name.removeprefix(POOLED), free, path):
                taken = True
                break
            drop(repo.root, free)  # not a worktree git can move (a populated submodule, broken records)
        if not taken:
            return None
    try:
        # a full sha is checked by the recycling itself (git refuses a branch at anything but a commit)
        sha = base if _SHA.fullmatch(base) else repo.git("rev-parse", "--verify", f"{base}^{{commit}}").strip()
        return _recycle(repo, path, branch, sha, force=force)
    except (GitError, OSError):
        with worktree_lock(repo.common_dir):
            drop(repo.root, path)
        return None


def empty(repo: Repo, pool: Path) -> None:
    """Remove the free worktrees of `pool`, at the end of its run: their directories deleted, then one `worktree
    prune` for git's records of them all (a free worktree is never locked, so none is kept)."""
    with worktree_lock(repo.common_dir):
        frees = sorted(pool.glob(f"{POOLED}*")) if pool.is_dir() else []
        for free in frees:
            shutil.rmtree(free, ignore_errors=True)
        if frees:
            run(("worktree", "prune"), repo.root)


def _move(admin: Path, old: Path, new: Path) -> bool:
    """`git worktree move` without a git process: the directory renamed, then git's record of where it is.

    Killed in between, the record names a directory that is gone: git prunes it, and `take` drops the worktree.
    """
    try:
        recorded = Path((admin / "gitdir").read_text().strip())
        if recorded.parent.resolve() != old.resolve() or (admin / "locked").exists():
            return False
        new.parent.mkdir(parents=True, exist_ok=True)
        old.rename(new)
    except OSError:
        return False
    (admin / "gitdir").write_text(f"{new / '.git'}\n")
    return True


def _admin(repo: Repo, path: Path) -> Path:
    return Path(repo.location(path)["GIT_DIR"])


def _recycle(repo: Repo, path: Path, branch: str, sha: str, *, force: bool) -> Worktree:
    admin = _admin(repo, path)
    left = _read_left(admin)
    for entry in admin.iterdir():
        if entry.name not in _KEEP:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    dotgit = path / ".git"
    if dotgit.is_dir() and not dotgit.is_symlink():
        shutil.rmtree(dotgit)
    dotgit.unlink(missing_ok=True)
    dotgit.write_text(f"gitdir: {admin}\n")
    shutil.copy2(admin / _PRISTINE, admin / "index")
    (admin / "HEAD").write_text(f"{sha}\n")
    worktree = Worktree(path=path, branch=branch, base=sha, repo=repo)
    if left is None or not recycled(worktree, *left):
        (admin / REFRESHED).unlink(missing_ok=True)
        worktree._git("read-tree", "--reset", "-u", "--no-recurse-submodules", sha)
        worktree._git("clean", "-ffdxq")
    repo.git("branch", *(("--force",) if force else ()), "--no-track", "--", branch, sha)
    (admin / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    adopt(worktree)
    return worktree


def _read_left(admin: Path) -> tuple[str, list[str], list[str]] | None:
    """The base a pooled worktree's saved index holds, the tracked files its agent changed or deleted, and the
    paths git does not track; None without a record."""
    try:
        base, *entries = (admin / _LEFT).read_text(errors="surrogateescape").split("\0")
    except (OSError, ValueError):
        return None
    changed = sorted({e[2:] for e in entries if e[:2] in ("C ", "R ")})
    untracked = [e[2:] for e in entries if e.startswith("? ")]
    return base, changed, untracked


def recycled(worktree: Worktree, old: str, changed: list[str], untracked: list[str]) -> bool:
    """Make a worktree whose index was reset to the one saved at `old` match `worktree.base`, touching only what
    its agent left and the paths that differ between the two commits; False when that cannot be done so (nothing
    is lost: the long way then makes every file right)."""
    root = worktree.path
    try:
        raw = worktree._git("diff-tree", "-r", "-z", "--no-renames", old, worktree.base).split("\0")
    except GitError:
        return False
    entries = [(meta[1:].split(), path) for meta, path in zip(raw[0::2], raw[1::2], strict=False) if meta[:1] == ":"]
    if any(len(meta) != 5 or "160000" in meta[:2] for meta, _ in entries):
        return False  # a submodule changed: left to git's own checkout
    removed = {path for meta, path in entries if meta[1] == "000000"}
    if not all(_delete(root, name) for name in [*untracked, *removed]):
        return False
    files = sorted({*changed, *(path for _, path in entries)} - removed)
    try:
        if entries:  # the index: removals first, so that a file may take the place of a directory
            ordered = sorted(entries, key=lambda entry: entry[0][1] != "000000")
            info = "".join(f"{meta[1]} {meta[3]}\t{path}\0" for meta, path in ordered)
            worktree._git("update-index", "--replace", "-z", "--index-info", input=info)
        if files:
            worktree._git("checkout-index", "--force", "--index", "-z", "--stdin", input="\0".join(files))
    except GitError:
        return False
    return True


def _delete(root: Path, name: str) -> bool:
    """Delete `name` (a file, a link or a directory) under `root`, and the directories it leaves empty; False
    when a link stands on the way to it."""
    parts = Path(name.rstrip("/")).parts
    real = Path(os.path.realpath(root))
    target = root.joinpath(*parts)
    if not parts or ".." in parts or Path(os.path.realpath(target.parent)) != real.joinpath(*parts[:-1]):
        return False
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    for parent in target.parents:
        if parent == root:
            break
        try:
            parent.rmdir()
        except OSError:
            break
    return True
