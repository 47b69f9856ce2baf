"""A retried task keeps the work of its last attempt: its new worktree is the integration head with that work on top.

    integration head ──► new branch `plait/<run>/<task>.<n>` ──► git's merge of the head and the last
    attempt's commit, checked out as uncommitted changes (conflicts left marked) ──► files another running
    task holds are put back, unless the claim on them is granted again

The branch itself holds only integrated work, so the task's next commit carries the whole of its work in
one commit. The same merge is made again when a resumed process finds no checkpoint of the attempt.
"""

from __future__ import annotations

from dataclasses import dataclass

from plait.agent.prompts import retry_note
from plait.coord.leases import Leases, Refusal
from plait.events.runlog import RunLog
from plait.events.types import TaskFinished, WorkCarried
from plait.workspace import GitError, Repo, Worktree

__all__ = ["Carried", "brief_note", "carry_over", "last_commit", "log_carried", "logged_carried", "merged_onto"]


@dataclass(frozen=True)
class Carried:
    """What a retry's worktree holds of attempt `number`'s work (`commit`), on the integration head `head`."""

    number: int
    commit: str
    head: str
    files: tuple[str, ...] = ()
    """Paths its work changed, in the worktree as uncommitted changes."""
    conflicts: tuple[str, ...] = ()
    """Paths left with conflict markers: its work and the integrated work changed the same lines."""
    put_back: tuple[tuple[str, str], ...] = ()
    """(path, task holding it) of the files put back as the head has them."""
    lost: str = ""
    """Why none of its work could be brought onto the head."""


def last_commit(log: RunLog, task_id: str) -> str:
    """The commit the task's last finished attempt left, as the log has it ('' when none)."""
    found = ""
    for event in log.events(agent=task_id, kinds=["task_finished"]):
        if isinstance(event, TaskFinished) and event.status != "done":
            found = event.commit or found
    return found


def merged_onto(repo: Repo, head: str, previous: str) -> tuple[str, list[str], tuple[str, ...]]:
    """git's merge of an attempt's work (`previous`) onto `head`: the tree, its conflicted paths, the paths changed.

    Raises:
        GitError: git could not merge them.
    """
    tree, conflicts = repo.merge_trees(head, previous)
    changed = repo.git("diff-tree", "-r", "-z", "--no-renames", "--name-only", head, tree)
    return tree, conflicts, tuple(f for f in changed.split("\0") if f)


def carry_over(
    repo: Repo, worktree: Worktree, previous: str, number: int, *, task_id: str, leases: Leases | None
) -> Carried:
    """Bring attempt `number`'s work (`previous`) into the fresh `worktree` of the next attempt, made at the head."""
    head = worktree.base
    if not previous or repo.is_ancestor(previous, head):
        return Carried(number, previous, head)
    try:
        tree, conflicts, changed = merged_onto(repo, head, previous)
        env = repo.location(worktree.path)
        repo.git("read-tree", "-m", "-u", "HEAD", tree, cwd=worktree.path, env=env)
        repo.git("reset", "--quiet", cwd=worktree.path, env=env)  # the index back on the head: the work is uncommitted
    except GitError as exc:
        return Carried(number, previous, head, lost=exc.detail)
    files = list(changed)
    refused: list[Refusal] = []
    for path in files if leases is not None else []:
        if leases is not None and leases.needs_claim(task_id, path):
            claim = leases.claim(task_id, path, f"attempt {number}'s work on it, kept for this attempt")
            if isinstance(claim, Refusal):
                refused.append(claim)
    if refused:
        worktree.put_back(head, [r.path for r in refused])
    gone = {r.path for r in refused}
    return Carried(
        number,
        previous,
        head,
        tuple(f for f in files if f not in gone),
        tuple(c for c in conflicts if c not in gone),
        tuple((r.path, r.holder) for r in refused),
    )


def log_carried(log: RunLog, task_id: str, attempt: int, carried: Carried) -> None:
    """Log what attempt `attempt`'s worktree was given of the last one, for its brief after a resume."""
    kept = f"kept attempt {carried.number}'s work on {len(carried.files)} file(s)" if carried.files else "kept nothing"
    work = {"commit": carried.commit, "head": carried.head, "files": list(carried.files)}
    log.append(
        WorkCarried(
            run_id=log.run_id,
            agent=task_id,
            decision=kept,
            reason=carried.lost,
            attempt=attempt,
            number=carried.number,
            **work,
            conflicts=list(carried.conflicts),
            put_back=[list(p) for p in carried.put_back],
            lost=carried.lost,
        )
    )


def logged_carried(log: RunLog, task_id: str, attempt: int) -> Carried | None:
    """What the log says attempt `attempt`'s worktree was given of the last one."""
    found: Carried | None = None
    for e in log.events(agent=task_id, kinds=["carried"]):
        if isinstance(e, WorkCarried) and e.attempt == attempt:
            put_back = tuple((p[0], p[1]) for p in e.put_back if len(p) == 2)
            found = Carried(e.number, e.commit, e.head, tuple(e.files), tuple(e.conflicts), put_back, e.lost)
    return found


def brief_note(carried: Carried, why: str, detail: str) -> str:
    """The retry's brief on the last attempt: why it did not get in, what the worktree holds of it, what failed."""
    return retry_note(
        carried.number,
        why,
        detail,
        head=carried.head,
        files=list(carried.files),
        conflicts=list(carried.conflicts),
        put_back=list(carried.put_back),
        lost=carried.lost,
    )
