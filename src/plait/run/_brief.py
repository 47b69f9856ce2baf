"""What the plan tells each agent of a parallel run: the map of its area, the plan rows that concern it, its interfaces.

Each agent's system prompt is the shared instructions (byte-identical for every agent, so a provider
caches them once, with the root's project instructions), then the project instructions of the directories of
its files, the map of its own area and its neighbours, then its rows of the plan: its task,
the tasks it starts from or that start from it, the owners of files near its own, and the contracts it
provides or consumes. Other tasks are counted, not listed.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from plait.agent.instructions import ProjectInstructions
from plait.agent.prompts import shared_prefix
from plait.globs import expand, new_paths
from plait.plan._areamap import Area, RepoIndex
from plait.plan._decision import shared_map
from plait.plan_model import Plan, PlanTask

__all__ = ["ProjectInstructions", "interfaces", "plan_overview", "task_area", "worker_systems"]

_FILES_SHOWN = 3


def interfaces(plan: Plan, task: PlanTask) -> list[str]:
    """The contracts a task implements or builds on, with their signatures, for its brief."""
    lines = []
    for name in task.provides:
        contract = plan.contract(name)
        shape = f" `{contract.signature.strip()}` in {contract.path or 'a file you choose'}" if contract else ""
        lines.append(f"You implement the interface {name}:{shape}; other tasks code against it exactly.")
    for name in task.consumes:
        contract = plan.contract(name)
        shape = f" `{contract.signature.strip()}` in {contract.path}" if contract else ""
        owner = f" (task {contract.owner} implements it)" if contract and contract.owner else ""
        lines.append(f"You use the interface {name}:{shape}{owner}. Code against that signature exactly.")
    return lines


def _marked(paths: list[str], shared: Collection[str]) -> list[str]:
    """`paths`, those the plan shares marked so: every task adds to them, none owns them."""
    return [f"{p} (shared)" if p in shared else p for p in paths]


def _row(task: PlanTask, note: str = "", shared: Collection[str] = ()) -> str:
    return f"- {task.id}{note}: {task.title} (writes: {', '.join(_marked(task.writes, shared)) or 'nothing declared'})"


def _some(paths: list[str], shared: Collection[str] = ()) -> str:
    more = len(paths) - _FILES_SHOWN
    return ", ".join(_marked(paths[:_FILES_SHOWN], shared)) + (f" and {more} more" if more > 0 else "")


def _near(task: PlanTask, near: Collection[str], files: list[str]) -> list[str]:
    """The files of `near` that `task` writes (existing, or to be created)."""
    if not near:
        return []
    writes = expand(task.writes, files) | new_paths(task.writes, files)
    return sorted(writes & set(near))


def plan_overview(
    plan: Plan, task: PlanTask | None = None, near: Collection[str] = (), files: list[str] | None = None
) -> str:
    """The plan as an agent of the run sees it: every row, or only those that concern `task`.

    `near` are the files around the task's own (its area and their neighbours, see `RepoIndex.area`); a task
    writing one of them is listed with those files. `files` are the repository's, to expand globs.
    """
    shared = set(plan.shared)
    if task is None:
        rows = [_row(t, shared=shared) for t in plan.tasks]
        return "\n".join(
            rows + [f"- contract {c.name}: {c.signature} (in {c.path}, by {c.owner})" for c in plan.contracts]
        )
    depends = [plan.task(d) for d in task.depends_on if d in {t.id for t in plan.tasks}]
    rows = [_row(task, " (your task)", shared)]
    rows += [_row(t, " (your worktree starts from its work)", shared) for t in depends]
    listed = {task.id, *(t.id for t in depends)}
    for other in plan.tasks:
        if other.id in listed:
            continue
        if task.id in other.depends_on:
            rows.append(_row(other, " (starts from your work)", shared))
        elif owned := _near(other, near, files or []):
            rows.append(f"- {other.id}: {other.title} (writes {_some(owned, shared)}, near your files)")
        else:
            continue
        listed.add(other.id)
    unlisted = len(plan.tasks) - len(listed)
    head = f"{len(plan.tasks)} tasks; those that concern yours:" + (
        f" ({unlisted} other{' works' if unlisted == 1 else 's work'} elsewhere in the repository)" if unlisted else ""
    )
    for contract in plan.contracts:
        if contract.name in (*task.provides, *task.consumes):
            rows.append(f"- contract {contract.name}: {contract.signature} (in {contract.path}, by {contract.owner})")
    return "\n".join([head, *rows])


def task_area(index: RepoIndex, plan: Plan, task: PlanTask) -> Area:
    """The files a task writes or reads, its contracts' files, and their neighbours."""
    contracts = [c.path for c in plan.contracts if c.path and c.name in (*task.provides, *task.consumes)]
    return index.area(task.writes, task.reads, contracts)


def worker_systems(
    plan: Plan, root: Path, files: list[str] | None = None, instructions: ProjectInstructions | None = None
) -> dict[str, str]:
    """Each task's system prompt: the shared instructions, the map of its area, its rows of the plan.

    A repository whose whole map costs less shared than the areas' (`shared_map`) gets that map for every task
    instead: word for word the same, it is cached once for all of them. So are the root's project
    `instructions` (AGENTS.md, CLAUDE.md); those of the directories of a task's files are its own.
    """
    index = RepoIndex(root, files)
    areas = {task.id: task_area(index, plan, task) for task in plan.tasks}
    maps = {task_id: index.render(area) for task_id, area in areas.items()}
    whole = shared_map(index, maps.values())
    common = instructions.root_section() if instructions is not None else ""
    systems = {}
    for task in plan.tasks:
        area = areas[task.id]
        overview = plan_overview(plan, task, area.files | set(area.new), index.paths)
        own = instructions.around([*task.writes, *task.reads]) if instructions is not None else ""
        systems[task.id] = shared_prefix(
            whole or maps[task.id],
            overview,
            whole_map=whole is not None,
            instructions=common,
            own_instructions=own,
        )
    return systems
