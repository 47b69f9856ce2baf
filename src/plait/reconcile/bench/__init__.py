"""`plait bench reconcile`: plait's merge ladder against real history, beside plain git, never writing the studied repo.

Work happens in a temporary bare clone that borrows the studied repository's objects (`git clone --shared`):
merges, trees and commits are written there, and nothing (object, ref or file) is added to the original.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from plait.errors import EnvironmentProblem
from plait.reconcile._gitio import git_bytes
from plait.reconcile.bench.static import static_problems, undefined_names
from plait.reconcile.bench.track_a import MergeCase, TrackA, historical_merges, run_track_a
from plait.reconcile.bench.track_b import TrackB, Window, run_track_b
from plait.workspace import GitError, Repo

__all__ = [
    "MergeCase",
    "TrackA",
    "TrackB",
    "Window",
    "historical_merges",
    "run_track_a",
    "run_track_b",
    "scratch_clone",
    "static_problems",
    "undefined_names",
]


@contextmanager
def scratch_clone(source: Path) -> Iterator[Repo]:
    """A throwaway bare clone of `source` sharing its objects; removed on exit."""
    status, _ = git_bytes(None, "rev-parse", "--git-dir", cwd=source, ok=range(256))
    if status != 0:
        raise EnvironmentProblem(f"{source} is not a git repository: give --repo a local clone")
    with tempfile.TemporaryDirectory(prefix="plait-bench-") as tmp:
        clone = Path(tmp) / "study.git"
        try:
            git_bytes(
                None, "clone", "--quiet", "--bare", "--shared", "--", str(source.resolve()), str(clone), cwd=Path(tmp)
            )
        except GitError as exc:
            raise EnvironmentProblem(f"could not clone {source} for the benchmark: {exc.detail}") from exc
        yield Repo(root=clone, common_dir=clone)
