"""Reading commits without a work tree: changed paths, file lists, file contents, word searches."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable

from plait.workspace import GitError, Repo
from plait.workspace._gitcall import argv, environment

__all__ = ["changed_paths", "grep_files", "read_blobs", "tree_paths"]


def changed_paths(repo: Repo, old: str, new: str) -> dict[str, str]:
    """Path -> status letter (A, M, D, T) of every file that differs between two commits; renames split."""
    out = repo.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
    fields = [f for f in out.split("\0") if f]
    return {fields[i + 1]: fields[i][0] for i in range(0, len(fields) - 1, 2)}


def tree_paths(repo: Repo, commit: str) -> list[str]:
    """Every file path in a commit's tree."""
    out = repo.git("ls-tree", "-r", "-z", "--name-only", commit)
    return [p for p in out.split("\0") if p]


def read_blobs(repo: Repo, commit: str, paths: Iterable[str]) -> dict[str, str | None]:
    """The text of each path at `commit` (undecodable bytes replaced), None where the path does not exist."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    request = "".join(f"{commit}:{p}\n" for p in wanted).encode()
    try:
        done = subprocess.run(
            argv(("cat-file", "--batch")),
            cwd=repo.root,
            env=environment(),
            input=request,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise GitError("cat-file --batch", str(exc)) from exc
    if done.returncode != 0:
        raise GitError("cat-file --batch", done.stderr.decode(errors="replace").strip() or "failed")
    result: dict[str, str | None] = {}
    data, pos = done.stdout, 0
    for path in wanted:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            result[path] = None
            continue
        size = int(header[2])
        result[path] = data[pos : pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return result


def grep_files(repo: Repo, commit: str, words: Iterable[str], pathspec: str = "*.py") -> list[str]:
    """Paths at `commit` matching `pathspec` that contain any of `words` as a whole word."""
    patterns = [arg for word in sorted(set(words)) for arg in ("-e", word)]
    if not patterns:
        return []
    out = repo.git("grep", "-l", "-z", "-w", "-F", "-I", *patterns, commit, "--", pathspec, check=False)
    prefix = f"{commit}:"
    return [p.removeprefix(prefix) for p in out.split("\0") if p]
