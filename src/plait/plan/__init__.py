"""Planning a run: the `Plan`, the planner agent, plans users write, and overlap analysis."""

from typing import TYPE_CHECKING

from plait.plan.globs import expand, matches
from plait.plan.model import (
    Contract,
    Plan,
    PlanError,
    PlanTask,
    parse_plan,
    slugify,
    topological_order,
    validate_plan,
)

if TYPE_CHECKING:
    from plait.plan.load import load_plan
    from plait.plan.overlap import OverlapDecision, resolve_overlaps
    from plait.plan.planner import PLANNER_ID, PlannerTools, make_plan, plan_tool_spec
    from plait.plan.render import describe_plan, render_plan
    from plait.plan.repomap import DEFAULT_MAP_BUDGET, repo_map, tracked_files

__all__ = [
    "DEFAULT_MAP_BUDGET",
    "PLANNER_ID",
    "Contract",
    "OverlapDecision",
    "Plan",
    "PlanError",
    "PlanTask",
    "PlannerTools",
    "describe_plan",
    "expand",
    "load_plan",
    "make_plan",
    "matches",
    "parse_plan",
    "plan_tool_spec",
    "render_plan",
    "repo_map",
    "resolve_overlaps",
    "slugify",
    "topological_order",
    "tracked_files",
    "validate_plan",
]

# The planner, its tools and the repository map are imported on first use: the settings read a plan's model
# (`plait.plan.model`) on every command, and this package's other modules bring the agent loop with them.
_LAZY = {
    "load_plan": "load",
    "OverlapDecision": "overlap",
    "resolve_overlaps": "overlap",
    "PLANNER_ID": "planner",
    "PlannerTools": "planner",
    "make_plan": "planner",
    "plan_tool_spec": "planner",
    "describe_plan": "render",
    "render_plan": "render",
    "DEFAULT_MAP_BUDGET": "repomap",
    "repo_map": "repomap",
    "tracked_files": "repomap",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"plait.plan.{_LAZY[name]}"), name)
