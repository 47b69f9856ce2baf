"""Worktrees layered over one shared checkout: an overlay mount per agent, where the machine allows mounting.

A plain worktree writes every file of the repository for each agent (48 MB and 0.6-3 s for a 5k-file
repository) and deletes them again at its end. A layered worktree is an overlay mount at the attempt's path: the
run's one checkout of a commit (its *base*, `.base-<sha>` beside the run's worktrees, written once) seen through
it read-only, and the agent's own writes kept in a directory of its own (`.layer-<name>/upper`). git sees a
normal worktree: its records are made as `worktree add --no-checkout` makes them, and its index is a copy of the
base's, whose stat data hold for the files seen through the mount (the kernel shows a file of the lower layer
with its own inode and times). An attempt that starts on another commit than the base (a retry on the
integration head, a task after its dependencies' merges) gets the paths that differ written into its layer, as
a recycled worktree gets them (`_pool.recycled`).

    open:  base made once (read-tree, checkout-index -u; renamed into place) ──► records ──► mount ──► index
           ──► the paths that differ from the base ──► the branch
    close: unmount ──► layer and records deleted (no git process)

Mounting needs the right to mount (root, or CAP_SYS_ADMIN in the mount namespace plait runs in): `can_layer`
finds out once per filesystem by mounting a tiny overlay, and without it plait falls back to plain worktrees
(`plait.run._opening.make_worktree`). A killed process leaves its mounts: whatever removes or remakes the
worktree (`_worktrees.drop`, `remove`, a run's clean-up) unmounts first. A base is deleted only when no mount
uses it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from plait.workspace._mounts import LAYER, close_layered, mount, overlays
from plait.workspace._pool import recycled
from plait.workspace._worktrees import REFRESHED, register, worktree_lock
from plait.workspace.git import Repo, Worktree
from plait.workspace.gitcall import GitError, run

__all__ = ["BASE", "open_layered", "remove_bases"]

BASE = ".base-"
"""The name prefix of a run's shared checkout of a commit, beside its worktrees."""

_MAKING = ".making-"
"""A base being written: renamed into place once whole, so a killed process never leaves half of one in use."""


def open_layered(repo: Repo, path: Path, branch: str, sha: str, *, force: bool) -> Worktree | None:
    """A layered worktree at `path` (absolute, absent or empty) on a new branch `branch` at commit `sha` (reset
    when `force`); None when it could not be made (nothing is left at `path` then)."""
    runs = path.parent
    try:
        base, base_sha = _base(repo, runs, sha)
    except (GitError, OSError):
        return None
    layer = runs / f"{LAYER}{path.name}"
    try:
        shutil.rmtree(layer, ignore_errors=True)
        (layer / "upper").mkdir(parents=True)
        (layer / "work").mkdir()
        with worktree_lock(repo.common_dir):
            admin = register(repo.common_dir, path, sha)
        (path / ".git").rename(layer / "upper" / ".git")  # hidden under the mount otherwise
        mount(path, base, layer / "upper", layer / "work")
        shutil.copy2(runs / f"{base.name}.index", admin / "index")
        worktree = Worktree(path=path, branch=branch, base=sha, repo=repo)
        # the paths that differ, in the index and in the layer: what a recycled worktree writes, cheaper than a
        # two-tree `read-tree -m -u`, which reads both trees whole (25-35 ms against 15-25 on git/git)
        if base_sha != sha and not recycled(worktree, base_sha, [], []):
            raise GitError("layered worktree", f"could not bring {base_sha[:10]} to {sha[:10]}")
        repo.git("branch", *(("--force",) if force else ()), "--no-track", "--", branch, sha)
        (admin / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
        return worktree
    except (GitError, OSError):
        close_layered(path)
        return None


def remove_bases(root: Path) -> None:
    """Delete the shared checkouts under `root` that no mount uses any more."""
    if not root.is_dir():
        return
    used = "\n".join(overlays().values())
    for base in root.glob(f"{BASE}*"):
        if base.is_dir() and f"lowerdir={os.path.realpath(base)}," not in used:
            shutil.rmtree(base, ignore_errors=True)
            Path(f"{base}.index").unlink(missing_ok=True)
            Path(f"{base}.{REFRESHED}").unlink(missing_ok=True)


def _base(repo: Repo, runs: Path, sha: str) -> tuple[Path, str]:
    """The run's shared checkout (made at `sha` if the run has none yet) and the commit it holds."""
    runs.mkdir(parents=True, exist_ok=True)
    with _locked(runs / f"{BASE}lock"):
        made = sorted(p for p in runs.glob(f"{BASE}*.index"))
        if made:
            base = Path(str(made[0]).removesuffix(".index"))
            _refresh(repo, base)
            return base, base.name.removeprefix(BASE)
        base = runs / f"{BASE}{sha}"
        tmp = runs / f"{_MAKING}{sha}"
        shutil.rmtree(tmp, ignore_errors=True)
        index = Path(f"{tmp}.index")
        index.unlink(missing_ok=True)
        env = {"GIT_DIR": str(repo.common_dir), "GIT_INDEX_FILE": str(index), "GIT_WORK_TREE": str(tmp)}
        tmp.mkdir()
        for args in (("read-tree", sha), ("checkout-index", "-a", "-f", "-u")):
            done = run(args, tmp, env)
            if done.returncode != 0:
                raise GitError(" ".join(args), done.stderr.strip())
        shutil.rmtree(base, ignore_errors=True)
        tmp.rename(base)
        index.rename(f"{base}.index")  # last: the mark of a whole base
        return base, sha


def _refresh(repo: Repo, base: Path) -> None:
    """Bring the base index's stat data up to date once, when its files are no longer too new to trust (files
    written in the second the index was are otherwise hashed again by every agent's git)."""
    index, done = Path(f"{base}.index"), Path(f"{base}.{REFRESHED}")
    if not done.exists() and time.time() - index.stat().st_mtime > 2:
        env = {"GIT_DIR": str(repo.common_dir), "GIT_INDEX_FILE": str(index), "GIT_WORK_TREE": str(base)}
        run(("update-index", "-q", "--refresh"), base, env)
        done.touch()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
