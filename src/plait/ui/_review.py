"""Each task of a run as a person reviews it: its work against the base and the integration head, summary, cost,
the merge rung that placed it and the gate's verdict, folded from the log and the repository.

A task's own change runs from where its branch met the integration it landed on (the base, unless it merged
integrated work in for a claim) to its commit. Against the head: how the integrated result differs from that
work in the task's own files (nothing when it landed as it was).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plait.events.runlog import RunLog
from plait.events.types import Committed, GateChecked, MergeStep, PlanMade, TaskFinished
from plait.plan_model import PlanTask
from plait.reconcile.queue import TaskBranch
from plait.ui.runview import RunView, phase_of
from plait.workspace import Repo

__all__ = ["Review", "TaskReview", "review_of"]


@dataclass
class TaskReview:
    """One task of a run, for review."""

    id: str
    title: str = ""
    state: str = ""
    summary: str = ""
    cost: str = ""
    cost_usd: float = 0.0
    branch: str = ""
    commit: str = ""
    depends_on: list[str] = field(default_factory=list)
    instructions: str = ""
    in_result: bool = False
    since: str = ""
    """Where its own change starts."""
    files: list[str] = field(default_factory=list)
    merged_by: str = ""
    """The rung that placed it: git when it merged cleanly, else the rungs that resolved its conflicts."""
    merge_steps: list[str] = field(default_factory=list)
    gate: str = ""
    stat_base: str = ""
    stat_head: str = ""
    diff_base: str = ""
    diff_head: str = ""

    def as_branch(self, completed_by: tuple[str, ...] = ()) -> TaskBranch:
        """The task as the merge queue takes it."""
        return TaskBranch(
            self.id,
            self.branch,
            self.commit,
            self.instructions,
            self.summary,
            tuple(self.depends_on),
            completed_by=completed_by,
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "state": self.state,
            "summary": self.summary,
            "cost": self.cost,
            "cost_usd": round(self.cost_usd, 6),
            "branch": self.branch,
            "commit": self.commit,
            "depends_on": self.depends_on,
            "in_result": self.in_result,
            "since": self.since,
            "files": self.files,
            "merged_by": self.merged_by,
            "merge_steps": self.merge_steps,
            "gate": self.gate,
            "diffstat_base": self.stat_base,
            "diffstat_head": self.stat_head,
            "diff_base": self.diff_base,
            "diff_head": self.diff_head,
        }


@dataclass
class Review:
    """A run's tasks against its base and its result (the integration head)."""

    run_id: str
    task: str
    status: str
    base: str
    branch: str
    head: str
    cost: str
    tasks: list[TaskReview]

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "task": self.task,
            "status": self.status,
            "base": self.base,
            "branch": self.branch,
            "head": self.head,
            "cost": self.cost,
            "tasks": [t.as_json() for t in self.tasks],
        }


def review_of(repo: Repo, log: RunLog, *, patches: bool = False) -> Review:
    """The run's review; `patches` adds the diffs themselves to the diffstats."""
    run_id, events = log.run_id, log.events()
    view = RunView.of(run_id, events)
    planned = _planned(events)
    ids = view.plan or [a for a in view.agents if phase_of(a) == "work"]
    chain = _chain(repo, view.base_commit, view.commit) if view.base_commit and view.commit else []
    tasks = []
    for task_id in ids:
        agent = view.agents.get(task_id)
        plan = planned.get(task_id)
        task = TaskReview(
            task_id,
            title=(agent.title if agent else "") or (plan.title if plan else ""),
            state=agent.state if agent else "waiting",
            summary=agent.summary if agent else "",
            cost=agent.cost_text if agent else "$0.0000",
            cost_usd=agent.cost_usd if agent else 0.0,
            depends_on=[d for d in plan.depends_on if d in ids] if plan else [],
            instructions=plan.instructions if plan else "",
        )
        task.branch, task.commit = _last_commit(events, task_id)
        task.merged_by, task.merge_steps = _merged_by(view.merges, task_id)
        task.gate = _gate(view.gates, task_id)
        if task.commit:
            _diffs(repo, task, view.base_commit, view.commit, chain, patches)
        tasks.append(task)
    status = view.status if view.ended is not None else "running"
    return Review(run_id, view.task, status, view.base_commit, view.branch, view.commit, view.cost_text, tasks)


def _planned(events: list[Any]) -> dict[str, PlanTask]:
    plans = [e for e in events if isinstance(e, PlanMade)]
    return {t.id: t for t in plans[-1].plan.tasks} if plans else {}


def _last_commit(events: list[Any], task_id: str) -> tuple[str, str]:
    branch, commit = "", ""
    for event in events:
        if isinstance(event, Committed) and event.agent == task_id:
            branch, commit = event.branch, event.sha
        elif isinstance(event, TaskFinished) and event.agent == task_id and event.commit:
            commit = event.commit
    return branch, commit


def _merged_by(merges: list[MergeStep], task_id: str) -> tuple[str, list[str]]:
    """The rung that placed it (git when it merged cleanly) and every step of its last merge."""
    steps = [s for s in merges if s.task == task_id]
    starts = [i for i, s in enumerate(steps) if s.rung == "git"]
    last = steps[starts[-1] :] if starts else steps
    shown = [f"{s.rung} {s.outcome}" + (f" ({', '.join(s.files)})" if s.files else "") for s in last]
    if not last:
        return "", shown
    resolved = [s for s in last if s.outcome == "resolved"]
    if resolved:
        rungs = dict.fromkeys(s.rung for s in resolved)
        return ", ".join(rungs) + f" ({len({f for s in resolved for f in s.files})} file(s))", shown
    final = last[-1]
    return (final.rung if final.outcome == "clean" else f"{final.rung} {final.outcome}"), shown


def _gate(gates: list[GateChecked], task_id: str) -> str:
    mine = [g for g in gates if task_id in g.tasks]
    if not mine:
        return ""
    last = [g for g in mine if g.commit == mine[-1].commit]
    failed = next((g for g in last if not g.passed), None)
    return f"failed {failed.stage}" if failed is not None else "passed"


def _chain(repo: Repo, base: str, head: str) -> list[str]:
    """The integration's first-parent commits, the base first."""
    out = repo.git("rev-list", "--first-parent", "--reverse", f"{base}..{head}", check=False).split()
    return [base, *out]


def _diffs(repo: Repo, task: TaskReview, base: str, head: str, chain: list[str], patches: bool) -> None:
    """Its own change (from where it met the integration it landed on) and what the head has in its files."""
    placed = next((i for i, c in enumerate(chain) if repo.is_ancestor(task.commit, c)), None)
    task.in_result = placed is not None
    onto = chain[placed - 1] if placed else (head or base)
    task.since = repo.git("merge-base", task.commit, onto, check=False).strip() or base
    task.files = repo.git("diff", "--name-only", task.since, task.commit, check=False).split()
    task.stat_base = repo.git("diff", "--stat", task.since, task.commit, check=False).rstrip()
    if head and task.files:
        task.stat_head = repo.git("diff", "--stat", task.commit, head, "--", *task.files, check=False).rstrip()
    if patches:
        task.diff_base = repo.git("diff", task.since, task.commit, check=False)
        if head and task.files:
            task.diff_head = repo.git("diff", task.commit, head, "--", *task.files, check=False)
