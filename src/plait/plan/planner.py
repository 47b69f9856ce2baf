"""The planner: an agent with read-only tools that explores the repository and submits a validated `Plan`.

make_plan ─► Agent(planner) ─► read_file / list_files / search ... ─► submit_plan
                                                                       │ invalid: PlanRejected, error back
                                                                       │ valid:   PlanMade, agent ends
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from plait.agent.context import ContextBudget, context_budget
from plait.agent.instructions import ProjectInstructions
from plait.agent.loop import Agent, AgentLimits, Spending
from plait.agent.tools import READ_TOOLS, Toolbox
from plait.agent.toolset import Tool, ToolOutcome, Toolset
from plait.errors import ModelError, PlaitError
from plait.events.runlog import RunLog
from plait.events.types import PlanMade, PlanRejected
from plait.messages import Model, ToolCall, ToolSpec
from plait.models.pricing import PriceTable
from plait.plan._decision import settle_mode
from plait.plan._prompt import offers_experts, planner_system, planner_task
from plait.plan.repomap import repo_map as build_repo_map
from plait.plan.repomap import tracked_files
from plait.plan_model import Plan, PlanError, parse_plan
from plait.workspace.command import Shell

__all__ = ["PLANNER_ID", "PlanSubmissions", "make_plan", "plan_tool_spec"]

PLANNER_ID = "planner"
SUBMIT = "submit_plan"
_STEPS_WARNING = 3


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with `$ref`s replaced by their definitions and titles dropped, which every provider accepts."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    # A string `title` is pydantic's label for a schema; a property may be called title too.
    return {k: _inline(v, defs) for k, v in node.items() if k != "$defs" and not (k == "title" and isinstance(v, str))}


_SHORT = {
    "mode": "'single' (one agent) or 'parallel' (one agent per task), as the system prompt explains.",
    "reason": "Why this mode and split, in a sentence.",
    "tasks": "Exactly one in single mode.",
    "contracts": "Interfaces tasks running at the same time share.",
    "shared": "Files several tasks each add their own lines to (also listed in each one's writes).",
    "experts": "Persistent read-only experts, large repositories only.",
    "writes": "Every file it creates or changes: paths or globs from the repository root; '!' excludes.",
    "reads": "Files it needs to read: paths or globs.",
    "provides": "Names of the contracts it implements.",
    "consumes": "Names of the contracts it uses that another task implements.",
    "depends_on": "Ids of the tasks whose finished work it needs.",
    "instructions": "All its agent knows of the plan: what to change, where, with which names, how to check it.",
    "signature": "The exact signature or shape the tasks code against.",
    "owner": "Id of the task that implements it.",
    "path": "The file it lives in.",
}
"""Descriptions of the plan's fields for the submit_plan tool, where the system prompt says the rest: every
planner call sends the schema, and the models' own descriptions (for plan files) were a third of its prompt."""


def _compact(node: Any, name: str = "") -> Any:
    """The schema without defaults, the `kind` a plan leaves out, and with the short descriptions."""
    if isinstance(node, list):
        return [_compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _compact(v, k) if k != "properties" else v for k, v in node.items() if k != "default"}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _compact(v, k) for k, v in out["properties"].items() if k != "kind"}
    if name in _SHORT and "description" in out:
        out["description"] = _SHORT[name]
    return out


def plan_tool_spec(experts: bool = True) -> ToolSpec:
    """The submit_plan tool: its argument is the plan itself, with `Plan`'s JSON schema in short.

    Args:
        experts: Whether the plan may propose experts (a planner of a small repository is not told of them).
    """
    schema = Plan.model_json_schema()
    parameters = _compact(_inline(schema, schema.get("$defs", {})))
    parameters.pop("description", None)
    if not experts:
        parameters["properties"].pop("experts", None)
    return ToolSpec(
        name=SUBMIT,
        description="Submit the plan; this ends planning when the plan is valid. The arguments are the plan "
        "itself. An invalid plan comes back with what to fix.",
        parameters=parameters,
    )


def _submitted(call: ToolCall) -> Any:
    """The plan in the call's arguments, unwrapped from a `plan` key or a JSON string, as models sometimes send it."""
    data: Any = call.arguments
    if isinstance(data, dict) and set(data) == {"plan"}:
        data = data["plan"]
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError:
            return None
    return data


def _has_experts(data: Any) -> bool:
    return isinstance(data, dict) and bool(data.get("experts"))


def _refused(name: str, offered: tuple[str, ...]) -> str:
    return (
        f"unknown tool {name!r}: the planner only reads the repository and cannot change it. "
        f"The tools are {', '.join(offered)}; call {SUBMIT} with the plan when you are ready."
    )


class PlanSubmissions:
    """The planner's plans: each submitted one checked, logged and counted; `tools` offers submit_plan with the
    read-only tools of a `Toolbox`, and refuses every other."""

    def __init__(
        self,
        toolbox: Toolbox,
        *,
        log: RunLog,
        max_attempts: int = 3,
        max_tasks: int | None = None,
        experts: bool = True,
    ) -> None:
        self.toolbox, self.log = toolbox, log
        self.max_attempts, self.max_tasks = max_attempts, max_tasks
        self.attempts = 0
        self.plan: Plan | None = None
        self.last_error = ""
        submit = Tool.raw(plan_tool_spec(experts), self._submit)
        self.tools = (toolbox.only(READ_TOOLS) | Toolset([submit])).refusing(_refused)
        """What the planner may call: the read-only tools and submit_plan."""
        self._files: list[str] | None = None

    def _tracked(self) -> list[str] | None:
        """The files an expert's area must match; None (no check) outside a git checkout."""
        if self._files is None:
            try:
                self._files = tracked_files(self.toolbox.root)
            except PlaitError:
                return None
        return self._files

    async def _submit(self, call: ToolCall) -> ToolOutcome:
        self.attempts += 1
        data = _submitted(call)
        if data is None:
            problems = [f"the arguments are not a JSON object: {call.raw_arguments[:120]!r}"]
        else:
            plan, problems = parse_plan(data, self._tracked() if _has_experts(data) else None, self.max_tasks)
            if plan is not None:
                self.plan = plan
                self.log.append(PlanMade(run_id=self.log.run_id, agent=PLANNER_ID, plan=plan, source="planner"))
                return ToolOutcome(
                    f"Plan accepted: {plan.mode}, {len(plan.tasks)} task(s).",
                    finished=True,
                    summary=f"{plan.mode} plan with {len(plan.tasks)} task(s): {plan.reason}",
                )
        self.last_error = "; ".join(problems)
        self.log.append(
            PlanRejected(run_id=self.log.run_id, agent=PLANNER_ID, attempt=self.attempts, error=self.last_error)
        )
        listed = "\n".join(f"- {p}" for p in problems)
        text = f"The plan was rejected (attempt {self.attempts} of {self.max_attempts}):\n{listed}\n"
        if self.attempts >= self.max_attempts:
            return ToolOutcome(text + "No attempts are left.", is_error=True, finished=True, summary=self.last_error)
        return ToolOutcome(text + f"Fix these and call {SUBMIT} again with the whole corrected plan.", is_error=True)


async def make_plan(
    task: str,
    *,
    repo_root: Path,
    model: Model,
    log: RunLog,
    prices: PriceTable,
    runner: Shell,
    max_attempts: int = 3,
    max_steps: int = 30,
    repo_map: str | None = None,
    budget: Spending | None = None,
    context: ContextBudget | None = None,
    verify: str | None = None,
    split: str = "auto",
    max_tasks: int | None = None,
    instructions: ProjectInstructions | None = None,
) -> Plan:
    """Run the planner agent on `task` over the repository at `repo_root`; its validated plan, split only if that pays.

    Args:
        task: What the user asked for.
        repo_root: The checkout the planner reads (read-only).
        model, log, prices: As for any agent; its events are logged as agent `planner`.
        runner: Unused by read-only tools; a toolbox needs one.
        max_attempts: Invalid submissions allowed before the planner fails.
        max_steps: Model calls allowed.
        repo_map: The map to put in the system prompt (default: `repo_map(repo_root)`).
        budget: The spending the planner is charged to.
        context: The context budget its conversation is compacted against (default: the model's built-in one).
        verify: The command the merge gate will run ('' for none), told to the planner; None when not known.
        split: "auto" runs a split only when its estimate says it pays; "always" runs the plan as proposed.
        max_tasks: The most tasks a plan may have; a larger one is rejected, with the maximum, like any invalid plan.
        instructions: The project instructions of the run's base commit; the planner is given the root's and
            those of the top-level directories.

    Raises:
        PlanError: no valid plan after `max_attempts` submissions, or the planner stopped without one.
        ModelError: the model failed for good.
    """
    if repo_map is None:
        repo_map = await asyncio.to_thread(build_repo_map, repo_root)
    submitted = PlanSubmissions(
        Toolbox(repo_root, runner, read_only=True),
        log=log,
        max_attempts=max_attempts,
        max_tasks=max_tasks,
        experts=offers_experts(repo_map),
    )
    agent = Agent(
        log=log,
        agent_id=PLANNER_ID,
        model=model,
        toolbox=submitted.tools,
        prices=prices,
        system=planner_system(repo_map, await asyncio.to_thread(instructions.top_level) if instructions else ""),
        limits=AgentLimits(max_steps=max_steps),
        budget=budget,
        context=context or context_budget(model.name),
    )
    warned: list[bool] = []

    def notes() -> list[str]:
        if warned or agent.steps < max_steps - _STEPS_WARNING:
            return []
        warned.append(True)
        return [f"You have {max_steps - agent.steps} model calls left: call {SUBMIT} with your plan now."]

    agent.notes = notes
    result = await agent.run(planner_task(task, verify))
    if submitted.plan is not None:
        if split == "always":
            return submitted.plan
        return await asyncio.to_thread(settle_mode, submitted.plan, repo_root, task, model.name, prices)
    if submitted.attempts >= max_attempts:
        last = submitted.last_error if len(submitted.last_error) <= 300 else submitted.last_error[:297] + "..."
        raise PlanError(
            f"the planner submitted {submitted.attempts} invalid plans; the last one: {last}. "
            "Run again, or write the plan yourself and pass it with --plan FILE"
        )
    if result.reason == "model_error":
        raise ModelError(f"the planner's model failed: {result.summary}")
    raise PlanError(f"the planner stopped without a plan ({result.reason}: {result.summary})")
