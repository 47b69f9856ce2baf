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
is (`_KEEP`) are deleted (reflog, ORIG_HEAD, a merge or rebase in progress, per-worktree refs and config), the
index is replaced by the copy saved when the worktree last matched a commit (so nothing the agent staged or
flagged as assume-unchanged survives), `read-tree --reset -u` writes the files whose contents or modes differ
from the new commit's (replacing what stands in their way), and what is then untracked or ignored is cleaned,
nested repositories too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from plait.workspace._gitcall import GitError, run
from plait.workspace._worktrees import drop, worktree_lock
from plait.workspace.git import Repo, Worktree

__all__ = ["POOLED", "adopt", "empty", "give_back", "take"]

POOLED = ".pool-"
"""The name prefix of a free worktree in a run's directory of worktrees."""

_PRISTINE = "plait-index"
"""The index saved in a pooled worktree's git directory when its files last matched a commit."""

_KEEP = frozenset({"commondir", "gitdir", "HEAD", "index", _PRISTINE})


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
    # files written in the second the saved index was would be hashed again at every recycling: now, their
    # stat data is brought up to date where their contents still match (an edited file's entry stays stale)
    refresh = ("update-index", "-q", "--refresh")
    run(refresh, worktree.path, {**repo.location(worktree.path), "GIT_INDEX_FILE": str(admin / _PRISTINE)})
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
    sha = repo.git("rev-parse", "--verify", f"{base}^{{commit}}").strip()
    try:
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
    worktree._git("read-tree", "--reset", "-u", "--no-recurse-submodules", sha)
    worktree._git("clean", "-ffdxq")
    repo.git("branch", *(("--force",) if force else ()), "--no-track", "--", branch, sha)
    (admin / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    adopt(worktree)
    return worktree
