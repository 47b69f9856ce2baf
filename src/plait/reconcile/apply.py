"""Bring a verified commit into the user's current branch: fast-forward, else a merge commit made without a work tree,
or one squashed commit; or only say what would change.

The user's checkout changes only at the very end (`git merge --ff-only` to the result), and only when none
of the paths that would change has uncommitted work; otherwise nothing is touched. The commits made here land
on the user's branch, so they are the user's (git's own identity); the agents' commits under them stay plait's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from plait.errors import EnvironmentProblem
from plait.reconcile._trees import changed_paths
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.workspace import PLAIT_IDENTITY, Repo

__all__ = ["INTERNAL_SUBJECTS", "Applied", "Mode", "apply_commit", "internal_commits", "user_identity"]

Mode = Literal["fast-forward", "merge", "squash", "up-to-date"]

INTERNAL_SUBJECTS = ("plait checkpoint", "Work in progress, kept through")
"""How plait's internal commits (an attempt's checkpoints, unfinished work kept through a merge) begin."""


@dataclass(frozen=True)
class Applied:
    """What `apply_commit` did to the current branch."""

    mode: Mode
    commit: str
    files: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    """What lands on the branch, one line each: short sha and subject."""
    author: str = ""
    """Who the commit made here is by (none for a fast-forward)."""


def user_identity(repo: Repo) -> tuple[dict[str, str], str]:
    """The environment a landing commit is made with, and who that is: the user, as git knows them; plait
    when git knows no one (no `user.name`/`user.email`)."""
    author = repo.git("var", "GIT_AUTHOR_IDENT", check=False).strip()
    committer = repo.git("var", "GIT_COMMITTER_IDENT", check=False).strip()
    if author and committer:
        return {}, author.rsplit(">", 1)[0] + ">"
    return dict(PLAIT_IDENTITY), f"{PLAIT_IDENTITY['GIT_AUTHOR_NAME']} <{PLAIT_IDENTITY['GIT_AUTHOR_EMAIL']}>"


def internal_commits(repo: Repo, head: str, target: str) -> list[str]:
    """plait's internal commits in what `target` would bring to `head`: `sha subject`, one each."""
    log = repo.git("log", "--format=%h %s", f"{head}..{target}", check=False).splitlines()
    return [line for line in log if line.partition(" ")[2].startswith(INTERNAL_SUBJECTS)]


def _commit(repo: Repo, tree: str, parents: list[str], message: str, env: dict[str, str]) -> str:
    args = [a for p in parents for a in ("-p", p)]
    return repo.git("commit-tree", tree, *args, env=env, input=repo.git("stripspace", input=message)).strip()


def _landing(repo: Repo, head: str, result: str) -> tuple[str, ...]:
    return tuple(repo.git("log", "--format=%h %s", f"{head}..{result}", check=False).splitlines())


def _listed(paths: list[str], limit: int = 5) -> str:
    return ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


async def apply_commit(
    repo: Repo, target: str, *, what: str, squash: str | None = None, dry_run: bool = False
) -> Applied:
    """Bring `target` into the checked-out branch; `what` names it in messages and the merge commit.

    `squash` is the message of one commit that lands it instead (its parent the branch's head); `dry_run`
    says what would happen and changes nothing.

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
    env, author = user_identity(repo)
    mode: Mode
    forward = repo.is_ancestor(head, target)
    if dry_run:
        since = repo.git("merge-base", head, target).strip()
        would: Mode = "squash" if squash is not None else ("fast-forward" if forward else "merge")
        commits = (f"(new) {squash.splitlines()[0]}",) if squash else _landing(repo, head, target)
        return Applied(would, target, tuple(sorted(changed_paths(repo, since, target))), commits, author)
    result, mode = target, "fast-forward"
    if not forward:
        message = f"Merge {what} into {branch}\n"
        outcome = await merge_commits(repo, head, target, resolvers=default_resolvers(), message=message)
        if outcome.commit is None:
            paths = [c.path for c in outcome.unresolved]
            raise EnvironmentProblem(
                f"{what} conflicts with {branch} in {_listed(paths)}: "
                f"merge it by hand (git merge {target[:12]}) or integrate again onto {branch}"
            )
        tree = repo.git("rev-parse", f"{outcome.commit}^{{tree}}").strip()
        result, mode = _commit(repo, tree, [head, target], message, env), "merge"
    if squash is not None:
        tree = repo.git("rev-parse", f"{result}^{{tree}}").strip()
        result, mode = _commit(repo, tree, [head], squash, env), "squash"
    touched = sorted(changed_paths(repo, head, result))
    dirty = set(repo.dirty_paths())
    overlap = [p for p in touched if p in dirty]
    if overlap:
        raise EnvironmentProblem(
            f"uncommitted changes in {_listed(overlap)} would be overwritten by {what}: "
            "commit or stash them, then apply again"
        )
    repo.git("merge", "--ff-only", "--quiet", result)
    by = "" if mode == "fast-forward" else author
    return Applied(mode, result, tuple(touched), _landing(repo, head, result), by)
