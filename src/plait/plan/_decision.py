"""What overlap analysis decides, and the dependency helpers its steps share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from plait.events.types import Decision
from plait.plan.model import PlanTask

__all__ = ["Action", "OverlapDecision", "add_dependency", "ancestors", "names"]

Action = Literal["order", "merge", "assign", "contract"]


@dataclass(frozen=True)
class OverlapDecision:
    """One resolution: what was done to which tasks over which files, and why."""

    action: Action
    tasks: tuple[str, ...]
    files: tuple[str, ...]
    what: str
    why: str

    def event(self, run_id: str) -> Decision:
        """The decision as an event for the log."""
        data = {"action": self.action, "tasks": list(self.tasks), "files": list(self.files)}
        return Decision(run_id=run_id, topic="overlap", decision=self.what, reason=self.why, data=data)


def names(ids: list[str]) -> str:
    return ", ".join(ids)


def ancestors(tasks: list[PlanTask]) -> dict[str, set[str]]:
    """For each task, every task it depends on, directly or not."""
    deps = {t.id: set(t.depends_on) for t in tasks}
    found: dict[str, set[str]] = {}

    def walk(task_id: str) -> set[str]:
        if task_id not in found:
            found[task_id] = set()
            for dep in deps.get(task_id, ()):
                found[task_id] |= {dep, *walk(dep)}
        return found[task_id]

    for task in tasks:
        walk(task.id)
    return found


def add_dependency(task: PlanTask, on: str) -> None:
    if on not in task.depends_on:
        task.depends_on.append(on)
