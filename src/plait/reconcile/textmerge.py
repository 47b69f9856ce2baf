"""git's own merge (merge-ort via `git merge-tree --write-tree`) without a work tree, and the commit it leads to.

merge-tree reads `.gitattributes` from the work tree and the index of the repository it runs in, so a merge
would depend on what the user has checked out. plait runs it blind to both and applies the merge attributes
of the `ours` commit itself (see `merge_attributes`).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from plait.errors import EnvironmentProblem
from plait.reconcile._gitio import decode, encode, git_bytes, hash_blob, read_blobs
from plait.reconcile._mergefile import (
    Hunk,
    Region,
    Stable,
    assemble,
    diff3_regions,
    has_conflict_markers,
    merge_file,
    split_lines,
)
from plait.reconcile.types import FileConflict, Resolution
from plait.workspace import PLAIT_IDENTITY, GitError, Repo

__all__ = [
    "Entry",
    "Hunk",
    "PathConflict",
    "Region",
    "Stable",
    "TreeMerge",
    "assemble",
    "both_changed",
    "commit_merge",
    "diff3_regions",
    "has_conflict_markers",
    "is_binary",
    "load_conflicts",
    "merge_attributes",
    "merge_file",
    "merge_tree",
    "split_lines",
    "write_tree",
]

MIN_GIT = (2, 38)
TEXT_KINDS = frozenset({"CONFLICT (contents)", "CONFLICT (binary)", "CONFLICT (modify/delete)"})
"""git's conflict types a rung may resolve by writing one file; others (renames, file/directory) need a person."""


@dataclass(frozen=True)
class Entry:
    """A tree entry: its mode and object id."""

    mode: str
    oid: str


@dataclass(frozen=True)
class PathConflict:
    """A path git left conflicted: the entry at each stage (None when absent) and git's conflict types."""

    path: str
    base: Entry | None
    ours: Entry | None
    theirs: Entry | None
    kinds: tuple[str, ...] = ()

    @property
    def textual(self) -> bool:
        """Whether writing one file can settle it (no rename, directory or submodule tangle)."""
        entries = [e for e in (self.base, self.ours, self.theirs) if e is not None]
        return set(self.kinds) <= TEXT_KINDS and all(e.mode != "160000" for e in entries)

    @property
    def mode(self) -> str:
        """The mode a resolved file gets: ours', else theirs', else base's."""
        entry = self.ours or self.theirs or self.base
        return entry.mode if entry else "100644"


@dataclass(frozen=True)
class TreeMerge:
    """What merge-tree made of `ours` and `theirs`: a tree (with markers in conflicted files) and the conflicts."""

    ours: str
    theirs: str
    tree: str
    conflicts: tuple[PathConflict, ...]

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _git_version(repo: Repo) -> tuple[int, ...]:
    _, out = git_bytes(repo, "version")
    found = re.search(rb"(\d+)\.(\d+)", out)
    return tuple(int(n) for n in found.groups()) if found else (0, 0)


def _parse(out: bytes, ours: str, theirs: str) -> TreeMerge:
    fields = out.split(b"\0")
    tree = fields[0].decode()
    stages: dict[str, dict[int, Entry]] = {}
    i = 1
    while i < len(fields) and fields[i]:
        info, path = fields[i].split(b"\t", 1)
        mode, oid, stage = info.decode().split()
        stages.setdefault(decode(path), {})[int(stage)] = Entry(mode, oid)
        i += 1
    kinds: dict[str, list[str]] = {}
    i += 1
    while i + 1 < len(fields) and fields[i]:
        count = int(fields[i])
        kind = decode(fields[i + 1 + count])
        for name in fields[i + 1 : i + 1 + count]:
            kinds.setdefault(decode(name), []).append(kind)
        i += count + 3
    conflicts = tuple(
        PathConflict(path, by.get(1), by.get(2), by.get(3), tuple(k for k in kinds.get(path, []) if k.startswith("C")))
        for path, by in stages.items()
    )
    return TreeMerge(ours, theirs, tree, conflicts)


def merge_tree(repo: Repo, ours: str, theirs: str) -> TreeMerge:
    """Merge two commits with merge-ort, writing objects but touching no work tree, index or ref."""
    with tempfile.TemporaryDirectory(prefix="plait-mt-") as tmp:
        status, out = git_bytes(
            repo,
            f"--git-dir={repo.common_dir}",
            f"--work-tree={tmp}",
            "merge-tree",
            "--write-tree",
            "-z",
            ours,
            theirs,
            env={"GIT_INDEX_FILE": str(Path(tmp) / "no-index")},
            cwd=Path(tmp),
            ok=range(0, 256),
        )
    if status in (0, 1):
        return _parse(out, ours, theirs)
    version = _git_version(repo)
    if version < MIN_GIT:
        shown = ".".join(map(str, version))
        raise EnvironmentProblem(f"git {shown} is too old for plait's merges: install git 2.38 or newer")
    raise GitError("merge-tree --write-tree", f"exit status {status} merging {ours[:12]} and {theirs[:12]}")


def is_binary(data: bytes) -> bool:
    """git's own test: a NUL byte in the first 8000 bytes."""
    return b"\0" in data[:8000]


def load_conflicts(repo: Repo, merge: TreeMerge) -> list[tuple[PathConflict, FileConflict, bool]]:
    """Each conflict with its texts and git's diff3 attempt, and whether any side is binary."""
    oids = [e.oid for c in merge.conflicts for e in (c.base, c.ours, c.theirs) if e and e.mode != "160000"]
    blobs = read_blobs(repo, oids)
    loaded = []
    for pc in merge.conflicts:
        raw = [blobs.get(e.oid) if e else None for e in (pc.base, pc.ours, pc.theirs)]
        binary = any(data is not None and is_binary(data) for data in raw)
        base, ours, theirs = (decode(data) if data is not None else None for data in raw)
        merged = ours if ours is not None else (theirs or "")
        if not binary and ours is not None and theirs is not None:
            merged, _ = merge_file(base or "", ours, theirs)
        loaded.append((pc, FileConflict(pc.path, base, ours, theirs, merged), binary))
    return loaded


def _scratch_index(repo: Repo, tmp: str, tree: str) -> dict[str, str]:
    env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
    git_bytes(repo, "read-tree", tree, env=env)
    return env


def merge_attributes(repo: Repo, commit: str, paths: Iterable[str]) -> dict[str, str]:
    """The `merge` attribute of each path as `commit` (and the repository's info/attributes) set it.

    Values as `git check-attr` prints them: "union", "binary", "text", a driver name, "set", "unset"
    (for `-merge`) or "unspecified".
    """
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    with tempfile.TemporaryDirectory(prefix="plait-attr-") as tmp:
        env = _scratch_index(repo, tmp, commit)
        _, out = git_bytes(
            repo, "check-attr", "--cached", "-z", "--stdin", "merge", input=encode("\0".join(wanted)), env=env
        )
    fields = out.split(b"\0")
    return {decode(fields[i]): decode(fields[i + 2]) for i in range(0, len(fields) - 2, 3)}


def both_changed(repo: Repo, ours: str, theirs: str) -> list[str]:
    """Paths that both commits changed since their merge bases (where a merge attribute can matter)."""
    status, out = git_bytes(repo, "merge-base", "--all", ours, theirs, ok=(0, 1))
    bases = out.decode().split()
    if status or not bases:
        return []

    def changed(side: str) -> set[str]:
        found: set[str] = set()
        for base in bases:
            _, names = git_bytes(repo, "diff-tree", "-r", "-z", "--name-only", "--no-renames", base, side)
            found.update(decode(n) for n in names.split(b"\0") if n)
        return found

    return sorted(changed(ours) & changed(theirs))


def write_tree(repo: Repo, tree: str, resolutions: Sequence[Resolution], modes: dict[str, str]) -> str:
    """`tree` with each resolved path replaced by its text (or removed), written through a scratch index."""
    lines = []
    for res in resolutions:
        if res.text is None:
            lines.append(b"0 " + b"0" * 40 + b"\t" + encode(res.path))
        else:
            oid = hash_blob(repo, encode(res.text))
            lines.append(f"{modes.get(res.path, '100644')} {oid}\t".encode() + encode(res.path))
    with tempfile.TemporaryDirectory(prefix="plait-tree-") as tmp:
        env = _scratch_index(repo, tmp, tree)
        git_bytes(repo, "update-index", "-z", "--index-info", input=b"".join(line + b"\0" for line in lines), env=env)
        _, out = git_bytes(repo, "write-tree", env=env)
    return out.decode().strip()


def commit_merge(repo: Repo, tree: str, ours: str, theirs: str, message: str) -> str:
    """A merge commit of `tree` with parents `ours` and `theirs`, made by plait; no ref moves."""
    _, out = git_bytes(
        repo,
        "commit-tree",
        tree,
        "-p",
        ours,
        "-p",
        theirs,
        input=encode(message or f"Merge {theirs[:12]} into {ours[:12]}\n"),
        env=PLAIT_IDENTITY,
    )
    return out.decode().strip()
