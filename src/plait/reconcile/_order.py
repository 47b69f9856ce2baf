"""Which side's addition goes first when both sides added at one spot: history's order, when it can be read.

The mainline's additions were there first: the side whose history since the merge base holds more merge
commits is taken as the mainline (an integration branch, a project's `main` merging pull requests, `dev`
merged into a feature branch). With no such difference, the side whose earliest commit touching the file
is older goes first. Otherwise the order is not known.
"""

from __future__ import annotations

from typing import Literal

from plait.reconcile._gitio import git_bytes
from plait.reconcile.types import MergeSite
from plait.workspace import Repo

__all__ = ["Side", "first_side"]

Side = Literal["ours", "theirs"]


def _git(repo: Repo, *args: str) -> str:
    status, out = git_bytes(repo, *args, ok=range(256))
    return out.decode(errors="replace").strip() if status == 0 else ""


def _merges_since_base(repo: Repo, ours: str, theirs: str) -> tuple[int, int] | None:
    base = _git(repo, "merge-base", ours, theirs)
    if not base:
        return None
    counts = [_git(repo, "rev-list", "--count", "--merges", f"{base}..{side}") for side in (ours, theirs)]
    return (int(counts[0] or 0), int(counts[1] or 0))


def _first_touch(repo: Repo, base: str, side: str, path: str) -> int | None:
    times = _git(repo, "log", "--format=%ct", f"{base}..{side}", "--", path).split()
    return min(int(t) for t in times) if times else None


def first_side(site: MergeSite | None, path: str) -> tuple[Side, str] | None:
    """The side whose addition to `path` comes first in history, and why; None when history does not say."""
    if site is None:
        return None
    merges = _merges_since_base(site.repo, site.ours, site.theirs)
    if merges is None:
        return None
    if merges[0] != merges[1]:
        side: Side = "ours" if merges[0] > merges[1] else "theirs"
        return side, f"{side} first: the mainline (more merges since the base)"
    base = _git(site.repo, "merge-base", site.ours, site.theirs)
    ours, theirs = (_first_touch(site.repo, base, c, path) for c in (site.ours, site.theirs))
    if ours is None or theirs is None or ours == theirs:
        return None
    side = "ours" if ours < theirs else "theirs"
    return side, f"{side} first: its commit is the earlier"
