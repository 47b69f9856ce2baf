"""The typed, versioned event union: everything that happens in a run, in order."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast, get_args

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from plait.events._base import _Event
from plait.events._decided import (
    AgentSession,
    AttemptPlaced,
    ContextCompacted,
    DebtsChanged,
    Decided,
    Decision,
    LeadReplied,
    LeaseAction,
    LeaseChanged,
    McpToolsListed,
    NotesDelivered,
    OwedTests,
    RunDispatched,
    RunKind,
    UserSaid,
    VerifyChecked,
    WorkCarried,
    WorktreeOpening,
)
from plait.events._expert_events import EXPERT_PREFIX, ExpertStarted, QuestionAnswered, QuestionAsked
from plait.messages import ModelResponse, ToolCall, Usage
from plait.plan_model import Plan

__all__ = [
    "BY_KIND",
    "AgentSession",
    "EXPERT_PREFIX",
    "AgentStopped",
    "AttemptPlaced",
    "GateChecked",
    "Integrated",
    "LeadReplied",
    "LeaseAction",
    "LeaseChanged",
    "McpToolsListed",
    "MergeStep",
    "NotePosted",
    "NotesDelivered",
    "OwedTests",
    "PlanMade",
    "PlanRejected",
    "PolicyDecided",
    "Committed",
    "ContextCompacted",
    "DebtsChanged",
    "Decided",
    "Decision",
    "Event",
    "ExpertStarted",
    "QuestionAnswered",
    "QuestionAsked",
    "EventAdapter",
    "ModelCallFailed",
    "ModelCallRetried",
    "ModelCallStarted",
    "ModelCallFinished",
    "PromptGiven",
    "RunDispatched",
    "RunFinished",
    "RunKind",
    "RunStarted",
    "StopReason",
    "TaskFinished",
    "TaskStarted",
    "ToolCalled",
    "ToolReturned",
    "UserSaid",
    "UserSteered",
    "VerifyChecked",
    "WorkCarried",
    "WorktreeOpening",
    "validate_event",
]

StopReason = Literal[
    "finished",
    "step_limit",
    "token_limit",
    "budget",
    "wall_time",
    "format_errors",
    "model_error",
    "model_refused",
    "interrupted",
    "stopped_by_user",
]


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
    status: Literal["done", "incomplete", "failed", "interrupted"]
    """`incomplete`: the run integrated some tasks and went on without others (dropped), which `reason` names."""
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
    status: Literal["done", "failed", "interrupted", "dropped"]
    """`dropped`: the task kept failing (or could not be integrated) and the run went on without it."""
    summary: str = ""
    reason: str = ""
    commit: str = ""


class PromptGiven(_Event):
    """The system prompt and the task an agent was given."""

    kind: Literal["prompt"] = "prompt"
    attempt: int = 1
    system: str
    user: str
    tools: list[str] = []


class ModelCallStarted(_Event):
    """Written before a request is sent: `req_hash` lets a replay tell whether it asks the same."""

    kind: Literal["model_request"] = "model_request"
    call: int
    attempt: int = 1
    """Which attempt at the task made the call; each attempt has its own numbering."""
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
    attempt: int = 1
    """Which attempt at the task made the call; each attempt has its own numbering."""
    req_hash: str
    response: ModelResponse
    cost_usd: float = 0.0
    duration_s: float = 0.0


class ModelCallFailed(_Event):
    kind: Literal["model_error"] = "model_error"
    call: int
    attempt: int = 1
    """Which attempt at the task made the call; each attempt has its own numbering."""
    error: str


class ToolCalled(_Event):
    kind: Literal["tool_call"] = "tool_call"
    call: ToolCall
    step: int = 0
    """The model call (numbered from 1 in its attempt) that asked for this tool call."""
    attempt: int = 1


class ToolReturned(_Event):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    output: str
    is_error: bool = False
    format_error: bool = False
    """The call itself was malformed (unknown tool, bad JSON, missing argument)."""
    duration_s: float = 0.0
    step: int = 0
    attempt: int = 1
    checkpoint: str = ""
    """A commit of the worktree after this call, when it changed files: where a resumed agent restarts."""


class Committed(_Event):
    kind: Literal["commit"] = "commit"
    sha: str
    branch: str
    message: str
    files: list[str] = []


class AgentStopped(_Event):
    kind: Literal["agent_stopped"] = "agent_stopped"
    reason: StopReason
    summary: str = ""
    steps: int = 0
    usage: Usage = Usage()
    cost_usd: float = 0.0


class PlanMade(_Event):
    """The plan a run follows; `source` says who wrote it."""

    kind: Literal["plan"] = "plan"
    plan: Plan
    source: Literal["planner", "file", "single"] = "planner"


class PlanRejected(_Event):
    """A plan the planner proposed that failed validation; the error went back to it."""

    kind: Literal["plan_rejected"] = "plan_rejected"
    attempt: int
    error: str


class MergeStep(_Event):
    """One rung of the merge ladder applied to one task's branch (or one file of it)."""

    kind: Literal["merge"] = "merge"
    task: str
    branch: str
    rung: Literal["git", "deterministic", "structured", "llm", "redo"]
    outcome: Literal["clean", "resolved", "conflict", "failed"]
    files: list[str] = []
    detail: str = ""
    commit: str = ""


class GateChecked(_Event):
    """One stage of the gate on a combined tree."""

    kind: Literal["gate"] = "gate"
    commit: str
    stage: Literal["parse", "semantic", "verify"]
    passed: bool
    tasks: list[str] = []
    output: str = ""
    duration_s: float = 0.0


class Integrated(_Event):
    """The integration branch moved to a commit that passed the gate, or a task was ejected from it."""

    kind: Literal["integrated"] = "integrated"
    branch: str
    commit: str
    tasks: list[str] = []
    ejected: list[str] = []
    reason: str = ""


class PolicyDecided(_Event):
    """What the permission policy decided about a command, a path or a connection."""

    kind: Literal["policy"] = "policy"
    action: Literal["command", "read", "write", "network"]
    subject: str
    verdict: Literal["allow", "ask", "deny"]
    rule: str = ""
    reason: str = ""


class NotePosted(_Event):
    """A note on the shared board: a finding, an interface decision, a warning."""

    kind: Literal["note"] = "note"
    topic: str
    text: str
    paths: list[str] = []
    to: list[str] = []
    """The agents it is addressed to; empty for everyone it concerns."""


class UserSteered(_Event):
    """The user stepped into agent `agent` from another process: a message it reads at its next model call
    (`say`), a pause before that call until `resume`, or a `stop` of its attempt (the task then dropped, or
    with `retry` tried again from its work)."""

    kind: Literal["steer"] = "steer"
    action: Literal["say", "pause", "resume", "stop"]
    text: str = ""
    retry: bool = False


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
    | LeaseChanged
    | NotesDelivered
    | ContextCompacted
    | UserSaid
    | LeadReplied
    | RunKind
    | AttemptPlaced
    | VerifyChecked
    | RunDispatched
    | WorktreeOpening
    | WorkCarried
    | DebtsChanged
    | AgentSession
    | McpToolsListed
    | AgentStopped
    | PlanMade
    | PlanRejected
    | MergeStep
    | GateChecked
    | Integrated
    | PolicyDecided
    | NotePosted
    | ExpertStarted
    | QuestionAsked
    | QuestionAnswered
    | UserSteered,
    Field(discriminator="kind"),
]

EventAdapter: TypeAdapter[Event] = TypeAdapter(Event, config=ConfigDict(defer_build=True))
"""The union's validator and serializer, built at its first use (which a resume need not make)."""

BY_KIND: dict[str, type[_Event]] = {cls.model_fields["kind"].default: cls for cls in get_args(get_args(Event)[0])}
"""Each kind's event model, by the `kind` its events carry."""


def validate_event(data: Any) -> Event:
    """The event `data` (an event's JSON, as a dict) is: checked by its kind's model alone, so that only the kinds a
    process reads are built. One it does not fit raises the union's `ValidationError`, in the union's words."""
    kind = data.get("kind") if isinstance(data, dict) else None
    model = BY_KIND.get(kind) if isinstance(kind, str) else None
    if model is not None:
        try:
            return cast("Event", model.model_validate(data))
        except ValidationError:
            pass
    return EventAdapter.validate_python(data)
