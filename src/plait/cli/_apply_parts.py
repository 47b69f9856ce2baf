"""What `plait apply` needs beyond the apply itself: the squash commit's message, written from the run's task and
its tasks' summaries, and `--pick`: only some tasks' work, integrated again with what they need."""

from __future__ import annotations

from collections.abc import Callable

from plait.errors import EnvironmentProblem, UsageError
from plait.events.runlog import RunLog
from plait.events.store import EventStore
from plait.run.review import needed_by, reintegrate, resolvers_for
from plait.settings import load_settings
from plait.ui._review import Review, TaskReview
from plait.workspace import Repo

__all__ = ["pick", "picked_tasks", "squash_message"]

_SUBJECT_LIMIT = 72


def _subject(task: str) -> str:
    line = next((x.strip() for x in task.splitlines() if x.strip()), "") or "plait run"
    if len(line) <= _SUBJECT_LIMIT:
        return line
    cut = line[: _SUBJECT_LIMIT - 1].rsplit(" ", 1)[0].rstrip(" ,.;:")
    return cut + "…"


def squash_message(repo: Repo, seen: Review, target: str) -> str:
    """A subject line from the run's task; a body listing each task the result holds, with its summary."""
    lines = [_subject(seen.task), ""]
    held = [t for t in seen.tasks if t.commit and repo.is_ancestor(t.commit, target)]
    for task in held:
        summary = task.summary.strip().splitlines()
        lines.append(f"- {task.id}: {task.title or (summary[0] if summary else '')}".rstrip())
        lines.extend(f"  {x}".rstrip() for x in summary)
    lines.extend(["", f"plait run {seen.run_id}"])
    return "\n".join(lines) + "\n"


def picked_tasks(repo: Repo, seen: Review, asked: list[str]) -> tuple[list[TaskReview], dict[str, str]]:
    """The tasks `asked` for and what they need (plan dependencies, work merged into their branches), with why,
    in the order they landed."""
    known = {t.id: t for t in seen.tasks}
    unknown = [t for t in asked if t not in known]
    if unknown:
        raise UsageError(f"run {seen.run_id} has no task {', '.join(unknown)}: its tasks are {', '.join(known)}")
    empty = [t for t in asked if not known[t].commit]
    if empty:
        raise UsageError(f"task {', '.join(empty)} of run {seen.run_id} has no work to apply")
    why = needed_by(repo, [t.as_branch() for t in seen.tasks if t.commit], asked)
    chain = repo.git("rev-list", "--first-parent", "--reverse", f"{seen.base}..{seen.head}", check=False).split()

    def landed(task: TaskReview) -> int:
        return next((i for i, c in enumerate(chain) if repo.is_ancestor(task.commit, c)), len(chain))

    return sorted((t for t in seen.tasks if t.id in why), key=landed), why


def pick(
    repo: Repo, store: EventStore, seen: Review, chosen: list[TaskReview], no_llm: bool, warn: Callable[[str], None]
) -> tuple[str, str]:
    """Integrate only `chosen` again (a new integration branch of the run); returns the branch and its head."""
    settings = load_settings(repo.root).settings
    ids = {t.id for t in chosen}
    left = {t.id: "not picked" for t in seen.tasks if t.commit and t.id not in ids}
    branches = [t.as_branch(tuple(d.id for d in chosen if t.id in d.depends_on)) for t in chosen]
    done = reintegrate(
        repo,
        RunLog(store, seen.run_id),
        seen.base,
        branches,
        dropped=left,
        settings=settings,
        resolvers=resolvers_for(settings, no_llm, RunLog(store, seen.run_id), warn),
        warn=warn,
    )
    if done.report.ejected:
        lost = "; ".join(f"{e.task_id}: {e.reason}" for e in done.report.ejected)
        raise EnvironmentProblem(f"picked work was ejected ({lost}): nothing applied; what passed is on {done.branch}")
    return done.branch, done.report.head
