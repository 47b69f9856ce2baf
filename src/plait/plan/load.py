"""A plan a user wrote, in YAML, for `plait run --plan FILE`, with friendly defaults.

    mode: parallel                 # default: parallel with more than one task, else single
    reason: ...                    # default: written by hand
    tasks:
      - title: Add a currency to Money      # id defaults to a slug of the title: add-a-currency-to-money
        instructions: ...                   # default: the title
        writes: [app/money.py, tests/test_money.py]
      - Export the ledger as CSV            # a bare string is a task with that title and instructions
    contracts: [...]

A bare list of tasks is a plan too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from plait.errors import UsageError
from plait.plan_model import Plan, describe_validation_error, slugify, validate_plan

__all__ = ["load_plan"]

_TITLE_CAP = 80


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read the plan {path}: {detail}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UsageError(f"{path} is not valid YAML{where}: {problem}") from exc


def _task(entry: Any) -> Any:
    """A task entry with its title and instructions filled in from each other."""
    if isinstance(entry, str):
        return {"title": entry.strip().splitlines()[0][:_TITLE_CAP] if entry.strip() else "", "instructions": entry}
    if not isinstance(entry, dict):
        return entry
    task = dict(entry)
    title, instructions = task.get("title"), task.get("instructions")
    if isinstance(instructions, str) and instructions.strip() and not title:
        task["title"] = instructions.strip().splitlines()[0][:_TITLE_CAP]
    if isinstance(title, str) and title.strip() and not instructions:
        task["instructions"] = title
    return task


def _fill_ids(tasks: list[Any]) -> None:
    used = {t["id"] for t in tasks if isinstance(t, dict) and isinstance(t.get("id"), str)}
    for task in tasks:
        if not isinstance(task, dict) or "id" in task or not isinstance(task.get("title"), str):
            continue
        base = slugify(task["title"])
        candidate, n = base, 2
        while candidate in used:
            candidate = f"{base[: 40 - len(str(n)) - 1]}-{n}"
            n += 1
        task["id"] = candidate
        used.add(candidate)


def _with_defaults(data: Any, path: Path) -> dict[str, Any]:
    if isinstance(data, list):
        data = {"tasks": data}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a plan is a mapping with a 'tasks' list, or a list of tasks")
    plan = dict(data)
    if not isinstance(plan.get("tasks"), list) or not plan["tasks"]:
        raise UsageError(f"{path}: tasks must be a non-empty list of tasks")
    plan["tasks"] = [_task(entry) for entry in plan["tasks"]]
    _fill_ids(plan["tasks"])
    plan.setdefault("mode", "parallel" if len(plan["tasks"]) > 1 else "single")
    plan.setdefault("reason", f"written by hand in {path.name}")
    return plan


def load_plan(path: Path | str, max_tasks: int | None = None) -> Plan:
    """The plan in the YAML file at `path`; `UsageError` naming the file and the field when it is not valid, or
    when it has more than `max_tasks` tasks."""
    path = Path(path)
    data = _with_defaults(_read(path), path)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        problems = describe_validation_error(exc)
    else:
        problems = validate_plan(plan, max_tasks=max_tasks)
        if not problems:
            return plan
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    raise UsageError(f"{path}: {problems[0]}{more}")
