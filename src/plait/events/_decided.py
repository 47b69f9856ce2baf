"""Choices plait logs for a person to read (`decision`, `reason`, under a `topic`), and those of them it reads back.

A `Decision` is a one-off choice nothing reads again; what resume or a view reads back is an event of its own
with typed fields: a lease changed, notes delivered, the context compacted, the user said something to a lead,
the lead replied, what a run is, where an attempt was placed, the verify command checked at the base, a run a
session dispatched, an attempt's worktree opening, what a retry kept of the last attempt, the gate's debts, an
external agent's session, the tools an agent's MCP servers offered.
Logs of schema 1 kept these as decisions; `plait.log_upgrade` reads them as these events.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from plait.events._base import _Event
from plait.messages import ToolSpec

__all__ = [
    "AgentSession",
    "AttemptPlaced",
    "ContextCompacted",
    "DebtsChanged",
    "Decided",
    "Decision",
    "LeadReplied",
    "LeaseAction",
    "LeaseChanged",
    "McpToolsListed",
    "NotesDelivered",
    "OwedTests",
    "RunDispatched",
    "RunKind",
    "UserSaid",
    "VerifyChecked",
    "WorkCarried",
    "WorktreeOpening",
]


class Decided(_Event):
    """What every logged choice has: what it was about (`topic`), what was decided, and why."""

    topic: str
    decision: str
    reason: str = ""


class Decision(Decided):
    """A choice plait made (a limit hit, a snapshot taken, a merge resolved) and why, that nothing reads back."""

    kind: Literal["decision"] = "decision"
    data: dict[str, Any] = {}


LeaseAction = Literal["claim", "wait", "refuse", "cycle", "release", "expire", "update"]
"""What happened to a claim: granted, waited for, refused, refused as it would close a cycle, let go, timed out,
or (`update`) the integrated work on the path merged into the task's worktree."""


class LeaseChanged(Decided):
    """Task `task`'s claim on `path`, a file outside its write-set, changed: the log rebuilds the claims from it."""

    kind: Literal["lease"] = "lease"
    topic: Literal["lease"] = "lease"
    action: LeaseAction
    path: str
    task: str
    holder: str
    """The task that holds the path (the claimant itself when it claims, releases or updates)."""
    why: str
    until: float = 0.0
    """When a granted claim expires (the clock of the process that granted it)."""
    after: list[str] = []
    """The tasks a granted claim waited for."""
    waited: float = 0.0
    """Seconds a refused claim waited first."""
    cycle: list[str] = []
    """The tasks whose waits a refused claim would have closed into a cycle."""
    head: str = ""
    """The integration head an `update` merged."""
    conflicts: list[str] = []
    """The files an `update` could not merge."""


class NotesDelivered(Decided):
    """The board's notes an agent was given before model call `step` of `attempt`: a resumed agent gets the same."""

    kind: Literal["notes_delivered"] = "notes_delivered"
    topic: Literal["notes"] = "notes"
    notes: list[str]
    step: int
    attempt: int


class ContextCompacted(Decided):
    """An agent's conversation was summarised before model call `step` of `attempt`, as it neared the context."""

    kind: Literal["compacted"] = "compacted"
    topic: Literal["context"] = "context"
    step: int
    attempt: int
    budget: int = 0
    """The model's context, in tokens."""
    messages_before: int = 0
    messages_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summarised: int = 0
    """The last step the summary covers."""


class UserSaid(Decided):
    """Message `turn` from the user to a lead: a question (`plait ask`) or a message of a session."""

    kind: Literal["user_said"] = "user_said"
    topic: Literal["question", "session"]
    turn: int
    text: str


class LeadReplied(Decided):
    """A lead's reply to the user's message `turn`; `ok` is False when the lead stopped instead of answering."""

    kind: Literal["lead_replied"] = "lead_replied"
    topic: Literal["reply"] = "reply"
    turn: int
    text: str
    ok: bool
    disagreements: str = ""
    """What the experts an investigation asked disagreed on."""


class RunKind(Decided):
    """What a run that makes no change is: an investigation (`plait ask`) or a session."""

    kind: Literal["run_kind"] = "run_kind"
    topic: Literal["kind"] = "kind"
    what: Literal["investigation", "session"]


class AttemptPlaced(Decided):
    """Where a backend placed attempt `attempt` of the agent: the node and the host it runs on."""

    kind: Literal["placed"] = "placed"
    topic: Literal["placed"] = "placed"
    node: str
    host: str
    attempt: int


class VerifyChecked(Decided):
    """What the verify command did at the run's base commit, checked once: a resumed run reads it back."""

    kind: Literal["verify"] = "verify"
    topic: Literal["verify"] = "verify"
    commit: str
    command: str
    state: Literal["none", "passes", "fails", "cannot-run"]
    output: str = ""
    """The command's output when it cannot run."""


class RunDispatched(Decided):
    """A run a session dispatched; `key` (the lead's call) finds it again when the session is resumed."""

    kind: Literal["dispatched"] = "dispatched"
    topic: Literal["dispatch"] = "dispatch"
    run: str
    task: str
    plan_file: str = ""
    key: str


class WorktreeOpening(Decided):
    """Attempt `attempt`'s worktree about to be made: a process killed while it made it makes the same one again."""

    kind: Literal["opening"] = "opening"
    topic: Literal["worktree"] = "worktree"
    attempt: int
    branch: str = ""
    path: str = ""
    base: str = ""
    why: str = ""
    """Why the attempt before it failed, told in its brief."""
    detail: str = ""


class WorkCarried(Decided):
    """What attempt `attempt`'s worktree was given of attempt `number`'s work, for its brief after a resume."""

    kind: Literal["carried"] = "carried"
    topic: Literal["retry"] = "retry"
    attempt: int
    number: int
    commit: str = ""
    head: str = ""
    files: list[str] = []
    conflicts: list[str] = []
    put_back: list[list[str]] = []
    """Each file put back, and the task that holds it: `[path, holder]`."""
    lost: str = ""


class OwedTests(BaseModel):
    """Tests task `by` left failing, to pass once the tasks in `until` land."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tests: list[str] = []
    by: str = ""
    until: list[str] = []


class DebtsChanged(Decided):
    """The gate's ledger of tests left failing until planned tasks land, logged whole after every change."""

    kind: Literal["debts"] = "debts"
    topic: Literal["gate-debts"] = "gate-debts"
    debts: list[OwedTests] = []


class AgentSession(Decided):
    """The session an external agent (`cli`) keeps for attempt `attempt`: a resumed attempt continues it, unless
    it is `lost` (it could not be continued, and the attempt started afresh)."""

    kind: Literal["agent_session"] = "agent_session"
    topic: Literal["external_agent"] = "external_agent"
    cli: str
    session: str
    attempt: int
    lost: bool = False
    model: str = ""


class McpToolsListed(Decided):
    """The tools an agent's MCP servers offered attempt `attempt` (and the servers that failed to start, with why):
    a resumed attempt is offered the same, without asking the servers again."""

    kind: Literal["mcp_tools"] = "mcp_tools"
    topic: Literal["mcp"] = "mcp"
    attempt: int
    tools: list[ToolSpec] = []
    failed: dict[str, str] = {}
