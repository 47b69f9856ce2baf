"""The typed, versioned event union: everything that happens in a run, in order."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from plait.models.base import ModelResponse, ToolCall, Usage

__all__ = [
    "SCHEMA_VERSION",
    "AgentStopped",
    "Committed",
    "Decision",
    "Event",
    "EventAdapter",
    "ModelCallFailed",
    "ModelCallRetried",
    "ModelCallStarted",
    "ModelCallFinished",
    "PromptGiven",
    "RunFinished",
    "RunStarted",
    "StopReason",
    "TaskFinished",
    "TaskStarted",
    "ToolCalled",
    "ToolReturned",
]

SCHEMA_VERSION = 1

StopReason = Literal["finished", "step_limit", "token_limit", "format_errors", "model_error", "interrupted"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    v: int = SCHEMA_VERSION
    run_id: str
    agent: str = ""
    """The agent (task id, `planner`...) the event belongs to; empty for run-level events."""
    ts: float = Field(default_factory=time.time)
    seq: int = 0
    """Position in the store, assigned on append."""


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    task: str
    repo: str
    base_commit: str
    base_ref: str
    model: str
    settings: dict[str, Any] = {}
    snapshot: bool = False
    """True when the base commit is a snapshot of the user's uncommitted changes."""


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    status: Literal["done", "failed", "interrupted"]
    reason: str = ""
    branch: str = ""
    commit: str = ""


class TaskStarted(_Event):
    kind: Literal["task_started"] = "task_started"
    title: str
    branch: str
    worktree: str
    base_commit: str
    attempt: int = 1


class TaskFinished(_Event):
    kind: Literal["task_finished"] = "task_finished"
    status: Literal["done", "failed", "interrupted"]
    summary: str = ""
    reason: str = ""
    commit: str = ""


class PromptGiven(_Event):
    """The system prompt and the task an agent was given."""

    kind: Literal["prompt"] = "prompt"
    system: str
    user: str
    tools: list[str] = []


class ModelCallStarted(_Event):
    """Written before a request is sent: `req_hash` lets a replay tell whether it asks the same."""

    kind: Literal["model_request"] = "model_request"
    call: int
    req_hash: str
    model: str
    messages: int


class ModelCallRetried(_Event):
    kind: Literal["model_retry"] = "model_retry"
    call: int
    attempt: int
    wait_s: float
    reason: str


class ModelCallFinished(_Event):
    kind: Literal["model_response"] = "model_response"
    call: int
    req_hash: str
    response: ModelResponse
    cost_usd: float = 0.0
    duration_s: float = 0.0


class ModelCallFailed(_Event):
    kind: Literal["model_error"] = "model_error"
    call: int
    error: str


class ToolCalled(_Event):
    kind: Literal["tool_call"] = "tool_call"
    call: ToolCall


class ToolReturned(_Event):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    output: str
    is_error: bool = False
    duration_s: float = 0.0


class Committed(_Event):
    kind: Literal["commit"] = "commit"
    sha: str
    branch: str
    message: str
    files: list[str] = []


class Decision(_Event):
    """A choice plait made (a limit hit, a snapshot taken, a merge resolved) and why."""

    kind: Literal["decision"] = "decision"
    topic: str
    decision: str
    reason: str = ""
    data: dict[str, Any] = {}


class AgentStopped(_Event):
    kind: Literal["agent_stopped"] = "agent_stopped"
    reason: StopReason
    summary: str = ""
    steps: int = 0
    usage: Usage = Usage()
    cost_usd: float = 0.0


Event = Annotated[
    RunStarted
    | RunFinished
    | TaskStarted
    | TaskFinished
    | PromptGiven
    | ModelCallStarted
    | ModelCallRetried
    | ModelCallFinished
    | ModelCallFailed
    | ToolCalled
    | ToolReturned
    | Committed
    | Decision
    | AgentStopped,
    Field(discriminator="kind"),
]

EventAdapter: TypeAdapter[Event] = TypeAdapter(Event)
