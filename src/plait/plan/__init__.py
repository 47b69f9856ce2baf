"""Planning a run: the planner agent, plans users write, the repository map and overlap analysis.

The plan itself (`Plan`, its tasks and checks) is `plait.plan_model`, a bottom layer the log and the settings
read too; the write-set patterns are `plait.globs`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plait.plan.load import load_plan
    from plait.plan.overlap import OverlapDecision, resolve_overlaps
    from plait.plan.planner import PLANNER_ID, PlanSubmissions, make_plan, plan_tool_spec
    from plait.plan.render import describe_plan, render_plan
    from plait.plan.repomap import DEFAULT_MAP_BUDGET, repo_map, tracked_files

__all__ = [
    "DEFAULT_MAP_BUDGET",
    "PLANNER_ID",
    "OverlapDecision",
    "PlanSubmissions",
    "describe_plan",
    "load_plan",
    "make_plan",
    "plan_tool_spec",
    "render_plan",
    "repo_map",
    "resolve_overlaps",
    "tracked_files",
]

# The planner, its tools and the repository map are imported on first use: they bring the agent loop with them.
_LAZY = {
    "load_plan": "load",
    "OverlapDecision": "overlap",
    "resolve_overlaps": "overlap",
    "PLANNER_ID": "planner",
    "PlanSubmissions": "planner",
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
