"""git's bookkeeping of worktrees, made safe to redo: whatever a killed `worktree add` left is cleared first.

A process killed in the middle of `git worktree add` can leave a worktree git still lists (locked while it was
being made, its directory half there or gone) and a `refs/heads/<branch>.lock` file that makes every later
update of the branch fail with "cannot lock ref". `drop` and `clear_ref_lock` take those away, so that making
the same worktree again works whatever the last process left.

`git worktree add` runs must not overlap (one reads the files of a worktree another is still writing, and fails:
"failed to read .git/worktrees/<name>/commondir"), and `worktree prune` may take away a worktree being made: both
hold `worktree_lock`. A new worktree's records are written by `register` under the lock, without a git process,
so that the agents of a run starting together do not wait for each other's `worktree add` in turn. `git worktree
remove` runs side by side with each other and with an `add`, so `remove` takes the lock only to clear up what git
refused to remove.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from plait.workspace._mounts import close_layered
from plait.workspace.gitcall import run

__all__ = ["REFRESHED", "SAVED_INDEX", "clear_ref_lock", "drop", "refresh_saved", "register", "remove", "worktree_lock"]

SAVED_INDEX = "plait-index"
"""The index plait saves in a worktree's git directory when its files last matched a commit (see `_pool`)."""

REFRESHED = "plait-refreshed"
"""Present once the saved index's stat data were brought up to date after a checkout of every file."""

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


def drop(root: Path, path: Path) -> None:
    """Delete the worktree at `path` and git's record of it, even one a killed `worktree add` left locked.

    git refuses to remove a worktree holding a filled submodule, or one whose `.git` file is missing; its
    directory is then deleted all the same, and `prune` forgets it. Hold `worktree_lock`.
    """
    close_layered(path)  # a layered worktree (see `_layers`) is unmounted first, whatever a killed process left
    # unlocked, a worktree whose directory is gone is pruned; this fails, harmlessly, when it is not locked
    run(("worktree", "unlock", str(path)), root)
    if path.exists():
        done = run(("worktree", "remove", "--force", "--force", str(path)), root)
        if done.returncode != 0:
            shutil.rmtree(path, ignore_errors=True)
    run(("worktree", "prune"), root)


def remove(root: Path, common_dir: Path, path: Path) -> None:
    """Delete the worktree at `path` and git's record of it; see the module's docstring for when it locks."""
    if close_layered(path):
        return
    if path.exists() and run(("worktree", "remove", "--force", "--force", str(path)), root).returncode == 0:
        return
    with worktree_lock(common_dir):
        drop(root, path)


def clear_ref_lock(common_dir: Path, branch: str, *, owned: str) -> bool:
    """Remove the lock file a killed git left on `refs/heads/<branch>`; only for a branch under `owned`.

    No other git touches plait's branches of a run while the process holding the run's lease makes its
    worktrees, so a lock there is one a dead process left. Returns whether there was one.
    """
    if not owned.endswith("/") or not branch.startswith(owned) or ".." in branch.split("/"):
        raise ValueError(f"branch {branch!r} is not under {owned!r}")
    lock = common_dir / "refs" / "heads" / f"{branch}.lock"
    try:
        lock.unlink()
    except FileNotFoundError:
        return False
    return True


def register(common_dir: Path, path: Path, head: str) -> Path:
    """git's records of a new worktree at `path` (absolute) whose HEAD is `head` (a sha, or `ref: refs/heads/...`),
    as `git worktree add --no-checkout` writes them, without a git process: a directory of its own under
    `.git/worktrees` (locked while it is made, as git locks it) and the `.git` file at `path`. Hold `worktree_lock`.

    Raises:
        FileExistsError: `path` is there and not empty.
    """
    if path.is_dir() and any(path.iterdir()) or path.exists() and not path.is_dir():
        raise FileExistsError(f"'{path}' already exists")
    records = common_dir / "worktrees"
    records.mkdir(exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", path.name).lstrip(".") or "worktree"
    name, n = stem, 0
    while (records / name).exists():
        n += 1
        name = f"{stem}{n}"
    admin = records / name
    admin.mkdir()
    (admin / "locked").write_text("initializing\n")
    path.mkdir(parents=True, exist_ok=True)
    (admin / "gitdir").write_text(f"{path / '.git'}\n")
    (path / ".git").write_text(f"gitdir: {admin}\n")
    (admin / "commondir").write_text("../..\n")
    (admin / "HEAD").write_text(f"{head}\n")
    (admin / "locked").unlink()
    return admin


def refresh_saved(git_dir: Path, work_tree: Path) -> Path:
    """A worktree's saved index, its stat data brought up to date where its files still match once after a
    checkout of every file: files written in the second the index was are otherwise read and hashed at every use.
    Not in the seconds right after it was saved, when those files would still be too new to trust."""
    saved = git_dir / SAVED_INDEX
    if saved.is_file() and not (git_dir / REFRESHED).exists() and time.time() - saved.stat().st_mtime > 2:
        env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree), "GIT_INDEX_FILE": str(saved)}
        run(("update-index", "-q", "--refresh"), work_tree, env)
        (git_dir / REFRESHED).touch()
    return saved
