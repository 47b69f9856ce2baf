"""Before the planner: one short model call that decides whether a task can gain from splitting at all.

triage ─► Agent(triage) ─► choose_mode(mode, reason)
            "single":   one agent takes the task as given; the planner is never asked
            "parallel": the planner reads the code and proposes a split (which its estimate may still run as one)

A planner's prompt (instructions, the repository's map, its tools) is a few thousand tokens, written to the
provider's cache and never read again when the plan is one agent's: for a small task that costs a third more
than the agent itself. The triage's prompt is short (the rules of the choice, the task, the repository's size),
under the size a provider caches, so it is billed once at the plain price.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plait.agent.loop import Agent, AgentLimits, Spending
from plait.agent.toolset import Tool, ToolOutcome, Toolset
from plait.errors import ModelError
from plait.events.runlog import RunLog
from plait.events.types import ToolCalled, ToolReturned
from plait.messages import Model, ToolCall
from plait.models.pricing import PriceTable
from plait.plan_model import PlanError

__all__ = ["TRIAGE_ID", "Triage", "repo_size", "triage", "triage_system"]

TRIAGE_ID = "triage"
CHOOSE = "choose_mode"
_MAX_STEPS = 3
_TOP_LEVEL = 12

_SYSTEM = """\
You decide how a team of coding agents takes on a task, before anyone reads the code. You read nothing and
change nothing: call choose_mode once, with the mode and a one-sentence reason.

- "single": one agent does the whole task. Choose it when the task is small (a few files, one concern), when it
  is a list of small changes (a function here, a few lines there, however many of them), or when its parts are
  so entangled that agents would wait for or clash with each other.
- "parallel": a planner reads the code and splits the task into parts that agents do at the same time, each in
  its own copy of the repository; their branches are merged and tested as they finish. Choose it only when the
  task has substantial parts (each many edits or a large new module) in different files, each of which can be
  finished and tested alone.

Splitting costs tokens: the planner reads the code, and every agent pays for its own prompt, finds its way,
reads the code around its part, tests and finishes, so a small part costs its agent about as much as one agent
spends on several such parts. (plait estimates a planner's split itself and runs it as one agent unless it costs
at most 1.25 times the tokens and is at least 1.5 times faster: you need not compute that.) When in doubt,
choose single.
"""


class _Choice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["single", "parallel"] = Field(
        description="'single': one agent does the task; 'parallel': a planner splits it."
    )
    reason: str = Field(description="Why, in one sentence: the parts you see, and what a split would cost or save.")


@dataclass(frozen=True)
class Triage:
    """The choice: one agent, or the planner's split, and why."""

    mode: Literal["single", "parallel"]
    reason: str


def repo_size(files: Sequence[str]) -> str:
    """The repository's size in a line or two: its tracked files, and how many lie in each top-level directory."""
    tops = Counter(f.split("/", 1)[0] + "/" if "/" in f else "(root)" for f in files)
    ranked = sorted(tops.items(), key=lambda item: (item[0].startswith("."), -item[1], item[0]))  # hidden ones last
    shown = ", ".join(f"{name} {n}" for name, n in ranked[:_TOP_LEVEL])
    more = f", {len(tops) - _TOP_LEVEL} more" if len(tops) > _TOP_LEVEL else ""
    return f"{len(files):,} tracked files ({shown}{more})." if files else "An empty repository."


def triage_system(files: Sequence[str]) -> str:
    """The triage's system prompt: the rules of the choice, then the repository's size."""
    return f"{_SYSTEM}\nThe repository: {repo_size(files)}\n"


def _chosen_before(log: RunLog) -> Triage | None:
    """The choice an earlier process of the run made: a choose_mode call whose result it logged without error.

    A replayed tool call hands back its logged outcome without running its handler, so a run killed after the
    choice (while the planner worked, say) would otherwise ask the model again and lose the choice it paid for."""
    done = {
        (e.step, e.call_id)
        for e in log.events(agent=TRIAGE_ID, kinds=["tool_result"])
        if isinstance(e, ToolReturned) and e.name == CHOOSE and not e.is_error
    }
    for event in log.events(agent=TRIAGE_ID, kinds=["tool_call"]):
        if isinstance(event, ToolCalled) and (event.step, event.call.id) in done:
            try:
                args = _Choice.model_validate(event.call.arguments)
            except ValidationError:
                continue
            return Triage(args.mode, _said(args.reason))
    return None


def _said(reason: str) -> str:
    return " ".join(reason.split()) or "no reason given"


async def triage(
    task: str,
    *,
    files: Sequence[str],
    model: Model,
    log: RunLog,
    prices: PriceTable,
    budget: Spending | None = None,
) -> Triage:
    """Ask the model whether `task` is one agent's or worth the planner's split; logged as agent `triage`. A run
    that asked before (and was killed since) gets the logged choice back without a model call.

    Args:
        task: What the user asked for.
        files: The repository's tracked files (their number and top-level directories are shown).
        model, log, prices, budget: As for any agent.

    Raises:
        ModelError: the model failed for good.
        PlanError: the model gave no choice in its few calls.
    """
    earlier = _chosen_before(log)
    if earlier is not None:
        return earlier
    chosen: list[Triage] = []

    async def choose(args: _Choice, call: ToolCall) -> ToolOutcome:
        reason = _said(args.reason)
        chosen.append(Triage(args.mode, reason))
        return ToolOutcome(f"Chosen: {args.mode}.", finished=True, summary=f"{args.mode}: {reason}")

    tool = Tool(CHOOSE, _Choice, choose, "Choose how the task is taken on; this ends your work.")
    agent = Agent(
        log=log,
        agent_id=TRIAGE_ID,
        model=model,
        toolbox=Toolset([tool]),
        prices=prices,
        system=triage_system(files),
        limits=AgentLimits(max_steps=_MAX_STEPS),
        budget=budget,
    )
    result = await agent.run(f"Your task: choose the mode for this task.\n\n{task.strip()}")
    if chosen:
        return chosen[-1]
    if result.reason == "model_error":
        raise ModelError(f"the model failed while choosing the mode: {result.summary}")
    raise PlanError(f"the model chose no mode for the task ({result.reason}: {result.summary})")
