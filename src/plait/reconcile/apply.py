"""Bring a verified commit into the user's current branch: fast-forward, else a merge commit made without a work tree.

The user's checkout changes only at the very end (`git merge --ff-only` to the result), and only when none
of the paths that would change has uncommitted work; otherwise nothing is touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from plait.errors import EnvironmentProblem
from plait.reconcile._trees import changed_paths
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.workspace import Repo

__all__ = ["Applied", "apply_commit"]


@dataclass(frozen=True)
class Applied:
    """What `apply_commit` did to the current branch."""

    mode: Literal["fast-forward", "merge", "up-to-date"]
    commit: str
    files: tuple[str, ...] = ()


def _listed(paths: list[str], limit: int = 5) -> str:
    return ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


async def apply_commit(repo: Repo, target: str, *, what: str) -> Applied:
    """Bring `target` into the checked-out branch; `what` names it in messages and the merge commit.

    Raises:
        EnvironmentProblem: HEAD is detached, the result conflicts with the branch, or uncommitted
            changes sit in paths the apply would change.
    """
    branch = repo.head_ref()
    if branch == "HEAD":
        raise EnvironmentProblem(f"HEAD is detached: check out the branch to apply {what} to, then apply again")
    head = repo.head()
    if repo.is_ancestor(target, head):
        return Applied("up-to-date", head)
    result, mode = target, "fast-forward"
    if not repo.is_ancestor(head, target):
        outcome = await merge_commits(
            repo, head, target, resolvers=default_resolvers(), message=f"Merge {what} into {branch}\n"
        )
        if outcome.commit is None:
            paths = [c.path for c in outcome.unresolved]
            raise EnvironmentProblem(
                f"{what} conflicts with {branch} in {_listed(paths)}: "
                f"merge it by hand (git merge {target[:12]}) or integrate again onto {branch}"
            )
        result, mode = outcome.commit, "merge"
    touched = sorted(changed_paths(repo, head, result))
    dirty = set(repo.dirty_paths())
    overlap = [p for p in touched if p in dirty]
    if overlap:
        raise EnvironmentProblem(
            f"uncommitted changes in {_listed(overlap)} would be overwritten by {what}: "
            "commit or stash them, then apply again"
        )
    repo.git("merge", "--ff-only", "--quiet", result)
    return Applied("merge" if mode == "merge" else "fast-forward", result, tuple(touched))
