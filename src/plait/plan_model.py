"""The plan a run follows: tasks with write-sets, contracts and dependencies, and the checks a plan must pass."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.json_schema import SkipJsonSchema

from plait.errors import PlaitError
from plait.globs import expand

__all__ = [
    "NAME",
    "PLANNING_FAILED",
    "TASK_ID",
    "Contract",
    "ExpertSpec",
    "Plan",
    "PlanError",
    "PlanTask",
    "describe_validation_error",
    "parse_plan",
    "slugify",
    "topological_order",
    "validate_plan",
]

TASK_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""What the name of an expert (or an investigation's area) may be: letters, digits, '_', '.' and '-'."""
"""A task id: a short slug, usable as a git branch name component."""


PLANNING_FAILED = "planning failed"
"""How the reason of a run that ended before it had a plan to run begins (`plait resume` does not plan again)."""


class PlanError(PlaitError):
    """The planner could not produce a valid plan, or a plan cannot be ordered."""

    exit_code = 1


def _as_list(value: Any) -> Any:
    """Accept a lone string for a list and null for an empty list: models and people write both."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else value


class _Strict(BaseModel):
    # An unknown field is usually a misspelt one; refusing it says which, ignoring it loses the intent.
    model_config = ConfigDict(extra="forbid")


class Contract(_Strict):
    """An interface tasks running at the same time agree on before either writes it."""

    name: str = Field(description="Short name, such as 'Money.parse' or 'ledger-api'.")
    signature: str = Field(
        description="The exact signature or shape: a function signature with types, a class with its methods, "
        "a JSON shape, a CLI flag. Consumers code against exactly this."
    )
    owner: str = Field("", description="Id of the task that implements it (it lists the name in provides).")
    path: str = Field("", description="File where it lives, relative to the repository root.")


class ExpertSpec(_Strict):
    """A persistent expert: a read-only agent that owns an area of the code and answers questions about it."""

    name: str = Field(
        min_length=1, max_length=40, description="A short id of letters, digits, '_', '.' and '-', such as 'storage'."
    )
    area: list[str] = Field(
        [], description="The files it owns, as paths or globs relative to the repository root ('src/db/**')."
    )
    brief: str = Field("", description="What it knows about and answers for, in a sentence.")

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not NAME.fullmatch(value):
            raise ValueError("an expert's name is letters, digits, '_', '.' and '-', such as 'storage'")
        return value

    @field_validator("area", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _as_list(value)


class PlanTask(_Strict):
    """One sub-task, run by one agent in its own worktree."""

    id: str = Field(description="Short lowercase slug: letters, digits and dashes, at most 40, such as 'add-currency'.")
    title: str = Field(description="One line saying what the task does.")
    instructions: str = Field(
        description="Everything the agent needs: what to change, where, how to verify it. "
        "The agent sees only its own task, so be specific."
    )
    writes: list[str] = Field(
        [],
        description="Files the task will create or change, as paths or globs relative to the repository root "
        "('src/app/models.py', 'src/app/api/**'). A leading '!' excludes paths. "
        "Tasks that run at the same time must not write the same file.",
    )
    reads: list[str] = Field([], description="Files the task needs to read, as paths or globs.")
    provides: list[str] = Field([], description="Names of contracts this task implements.")
    consumes: list[str] = Field([], description="Names of contracts this task uses but another task implements.")
    depends_on: list[str] = Field(
        [], description="Ids of tasks whose finished work this task needs; it starts from their result."
    )
    kind: Literal["work", "contract"] = Field(
        "work", description="Leave it out: plait adds the 'contract' tasks, which only write interface stubs, itself."
    )
    agent: SkipJsonSchema[str] = Field("", exclude_if=lambda v: not v)
    """The agent that works on the task (`claude-code`, `command:TEMPLATE`), set in a plan file; '' for the run's.
    Not in the planner's schema, and left out of the plan's record when unset."""

    @field_validator("writes", "reads", "provides", "consumes", "depends_on", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _as_list(value)


class Plan(_Strict):
    """What a run does: one agent (`single`) or several at once (`parallel`), and why."""

    mode: Literal["single", "parallel"] = Field(
        description="'single': one agent does the whole task. 'parallel': each task runs as its own agent, "
        "at the same time as the tasks it does not depend on."
    )
    reason: str = Field(description="Why this mode and this split, in a sentence or two.")
    tasks: list[PlanTask] = Field(description="The tasks; exactly one in single mode.")
    contracts: list[Contract] = Field([], description="Interfaces that tasks running at the same time share.")
    shared: list[str] = Field(
        [],
        description="Files several tasks each add to, such as a registry, a package __init__ that re-exports, or a "
        "list of commands, as paths relative to the repository root. Every task that adds to one also lists it in "
        "its writes; those tasks run at the same time and edit it without a claim, each adding its own lines "
        "(an import, a list or dict entry), which the merge keeps side by side.",
    )
    experts: list[ExpertSpec] = Field(
        [],
        description="Persistent experts to keep for the run, in a large repository only: each owns an area "
        "that several tasks must understand but none writes, and answers their questions from one reading.",
    )

    @field_validator("contracts", "experts", "shared", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _as_list(value)

    def task(self, task_id: str) -> PlanTask:
        """The task with that id; `KeyError` when there is none."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def contract(self, name: str) -> Contract | None:
        """The declared contract of that name, if any."""
        return next((c for c in self.contracts if c.name == name), None)


def slugify(text: str, max_len: int = 40) -> str:
    """A task id made from free text: lowercase words joined by dashes, cut at a word boundary."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            break
        slug = candidate
    return slug or (words[0][:max_len] if words else "task")


def _find_cycle(plan: Plan) -> list[str] | None:
    """The first dependency cycle, as the ids along it (first id repeated at the end), or None."""
    edges = {t.id: [d for d in t.depends_on if any(d == u.id for u in plan.tasks)] for t in plan.tasks}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in edges.get(node, []):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        path.pop()
        state[node] = 2
        return None

    for task in plan.tasks:
        if task.id not in state and (cycle := visit(task.id)):
            return cycle
    return None


def _relative(pattern: str) -> bool:
    """Whether a path or glob (negated or not) stays inside the repository: not empty, not absolute, no `..`."""
    bare = pattern.removeprefix("!")
    return bool(bare.strip()) and not bare.startswith("/") and ".." not in bare.split("/")


def _path_problems(task: PlanTask) -> list[str]:
    problems = []
    for field, patterns in (("writes", task.writes), ("reads", task.reads)):
        for pattern in patterns:
            if not _relative(pattern):
                problems.append(
                    f"task {task.id!r}: {field} entry {pattern!r} must be a path relative to the repository root"
                )
    return problems


def _task_problems(plan: Plan) -> list[str]:
    problems: list[str] = []
    seen: set[str] = set()
    ids = {t.id for t in plan.tasks}
    for i, task in enumerate(plan.tasks):
        name = f"task {task.id!r}" if task.id else f"task {i + 1}"
        if not TASK_ID.fullmatch(task.id):
            problems.append(
                f"{name}: the id must be 1-40 lowercase letters, digits and dashes, starting with a letter or digit"
            )
        if task.id in seen:
            problems.append(f"{name}: the id is used by more than one task")
        seen.add(task.id)
        if not task.title.strip():
            problems.append(f"{name}: the title is empty")
        if not task.instructions.strip() and plan.mode != "single":  # one agent is given the task itself
            problems.append(f"{name}: the instructions are empty")
        for dep in task.depends_on:
            if dep not in ids:
                problems.append(f"{name} depends on {dep!r}, which is not a task of the plan")
        problems.extend(_path_problems(task))
    return problems


def _contract_problems(plan: Plan) -> list[str]:
    problems: list[str] = []
    ids = {t.id for t in plan.tasks}
    providers: dict[str, str] = {}
    # A contract task's `provides` names the stubs it writes; the work task that implements them is the provider.
    for task in (t for t in plan.tasks if t.kind == "work"):
        for name in task.provides:
            if name in providers and providers[name] != task.id:
                problems.append(f"contract {name!r} is provided by both {providers[name]!r} and {task.id!r}")
            providers.setdefault(name, task.id)
    for contract in plan.contracts:
        if not contract.name.strip():
            problems.append("a contract has an empty name")
        if contract.owner and contract.owner not in ids:
            problems.append(f"contract {contract.name!r} names owner {contract.owner!r}, which is not a task")
        elif contract.owner and (provider := providers.get(contract.name, contract.owner)) != contract.owner:
            problems.append(f"contract {contract.name!r} is owned by {contract.owner!r} but provided by {provider!r}")
        elif contract.owner:
            providers.setdefault(contract.name, contract.owner)
    for task in plan.tasks:
        for name in task.consumes:
            if name not in providers:
                problems.append(f"task {task.id!r} consumes contract {name!r}, which no task provides")
    return problems


def _expert_problems(plan: Plan, files: Sequence[str] | None) -> list[str]:
    problems: list[str] = []
    seen: set[str] = set()
    for expert in plan.experts:
        if expert.name in seen:
            problems.append(f"expert {expert.name!r}: the name is used by more than one expert")
        seen.add(expert.name)
        for pattern in expert.area:
            if not _relative(pattern):
                problems.append(f"expert {expert.name!r}: area entry {pattern!r} must be a path relative to the root")
        if files is not None and expert.area and not expand(expert.area, files):
            problems.append(f"expert {expert.name!r}: its area {', '.join(expert.area)} matches no tracked file")
    return problems


def validate_plan(plan: Plan, files: Sequence[str] | None = None, max_tasks: int | None = None) -> list[str]:
    """Every problem that keeps `plan` from running, one sentence each; empty when it is valid.

    With `files` (the repository's tracked files), an expert's area must match some of them; with `max_tasks`,
    a plan of more tasks has that one problem, which calls for another plan rather than fixes to this one.
    """
    problems: list[str] = []
    if not plan.tasks:
        return ["the plan has no tasks"]
    if max_tasks is not None and len(plan.tasks) > max_tasks:
        return [
            f"the plan has {len(plan.tasks)} tasks, more than the {max_tasks} a plan may have (setting max_tasks): "
            "merge related tasks into fewer, larger ones"
        ]
    if plan.mode == "single" and len(plan.tasks) > 1:
        problems.append(f"a single-mode plan has exactly one task, this one has {len(plan.tasks)}")
    if not plan.reason.strip():
        problems.append("the reason is empty: say why this mode and this split")
    problems.extend(_task_problems(plan))
    problems.extend(_contract_problems(plan))
    problems.extend(_expert_problems(plan, files))
    problems.extend(
        f"shared entry {p!r} must be a path relative to the repository root" for p in plan.shared if not _relative(p)
    )
    cycle = _find_cycle(plan)
    if cycle:
        problems.append("the dependencies form a cycle: " + " -> ".join(cycle))
    return problems


def describe_validation_error(exc: ValidationError) -> list[str]:
    """Pydantic's errors as sentences naming the field, such as `tasks[1].instructions is missing`."""
    problems = []
    for error in exc.errors():
        where = ""
        for part in error["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        where = where or "the plan"
        if error["type"] == "missing":
            problems.append(f"{where} is missing")
        elif error["type"] == "extra_forbidden":
            problems.append(f"{where} is not a known field")
        else:
            shown = repr(error["input"])
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            problems.append(f"{where}: {error['msg']} (got {shown})")
    return problems


def parse_plan(
    data: Any, files: Sequence[str] | None = None, max_tasks: int | None = None
) -> tuple[Plan | None, list[str]]:
    """Build and validate a plan from JSON-like data: the plan, or None and every problem found."""
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        return None, describe_validation_error(exc)
    problems = validate_plan(plan, files, max_tasks)
    return (None, problems) if problems else (plan, [])


def topological_order(plan: Plan) -> list[PlanTask]:
    """The tasks with each after its dependencies, otherwise in plan order; `PlanError` on a cycle."""
    cycle = _find_cycle(plan)
    if cycle:
        raise PlanError("the plan's dependencies form a cycle: " + " -> ".join(cycle))
    order: list[int] = []
    done: set[str] = set()
    ids = {t.id for t in plan.tasks}
    while len(order) < len(plan.tasks):
        # Without a cycle some task is always ready; duplicate ids are told apart by position.
        ready = next(
            i
            for i, task in enumerate(plan.tasks)
            if i not in order and all(d in done or d not in ids for d in task.depends_on)
        )
        order.append(ready)
        done.add(plan.tasks[ready].id)
    return [plan.tasks[i] for i in order]
