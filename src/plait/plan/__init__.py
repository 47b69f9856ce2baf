"""Planning a run: the `Plan`, the planner agent, plans users write, and overlap analysis."""

from plait.plan.globs import expand, matches
from plait.plan.load import load_plan
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
