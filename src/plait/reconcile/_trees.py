"""Reading commits without a work tree: changed paths, file lists, file contents, word searches."""

from __future__ import annotations

from collections.abc import Iterable

from plait.reconcile._gitio import read_objects
from plait.workspace import Repo
from plait.workspace.gitcall import run

__all__ = ["changed_paths", "changed_since_fork", "grep_files", "read_blobs", "tree_paths"]


def changed_paths(repo: Repo, old: str, new: str) -> dict[str, str]:
    """Path -> status letter (A, M, D, T) of every file that differs between two commits; renames split."""
    return _by_status(repo.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new))


def changed_since_fork(repo: Repo, head: str, commit: str, fallback: str) -> dict[str, str]:
    """`changed_paths` from where `commit` forked from `head` (their merge base) to `commit`, in one git call; from
    `fallback` when they have none, from the one `git merge-base` names when they have several."""
    done = run(("diff-tree", "-r", "-z", "--no-renames", "--name-status", "--merge-base", head, commit), repo.root)
    if done.returncode != 0:  # no merge base, or several
        since = repo.git("merge-base", commit, head, check=False).strip() or fallback
        return changed_paths(repo, since, commit)
    return _by_status(done.stdout)


def _by_status(out: str) -> dict[str, str]:
    fields = [f for f in out.split("\0") if f]
    return {fields[i + 1]: fields[i][0] for i in range(0, len(fields) - 1, 2)}


def tree_paths(repo: Repo, commit: str) -> list[str]:
    """Every file path in a commit's tree."""
    out = repo.git("ls-tree", "-r", "-z", "--name-only", commit)
    return [p for p in out.split("\0") if p]


def read_blobs(repo: Repo, commit: str, paths: Iterable[str]) -> dict[str, str | None]:
    """The text of each path at `commit` (undecodable bytes replaced), None where the path does not exist."""
    wanted = list(dict.fromkeys(paths))
    read = read_objects(repo, [f"{commit}:{path}" for path in wanted])
    return {
        path: found[2].decode("utf-8", errors="replace") if found is not None and found[1] == b"blob" else None
        for path, found in zip(wanted, read, strict=True)
    }


def grep_files(repo: Repo, commit: str, words: Iterable[str], pathspec: str = "*.py") -> list[str]:
    """Paths at `commit` matching `pathspec` that contain any of `words` as a whole word."""
    patterns = [arg for word in sorted(set(words)) for arg in ("-e", word)]
    if not patterns:
        return []
    out = repo.git("grep", "-l", "-z", "-w", "-F", "-I", *patterns, commit, "--", pathspec, check=False)
    prefix = f"{commit}:"
    return [p.removeprefix(prefix) for p in out.split("\0") if p]
