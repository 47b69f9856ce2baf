"""The event log: typed events and the stores that keep them.

`PostgresEventStore` is imported on first use, so that plait with the SQLite log never loads psycopg.
"""

from typing import TYPE_CHECKING, Any

from plait.events.backends import open_event_store
from plait.events.runlog import RunLog
from plait.events.store import EventStore, ObservedStore, SQLiteEventStore
from plait.events.types import (
    AgentStopped,
    AttemptPlaced,
    Committed,
    ContextCompacted,
    Decided,
    Decision,
    Event,
    EventAdapter,
    ExpertStarted,
    GateChecked,
    Integrated,
    LeadReplied,
    LeaseChanged,
    MergeStep,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallStarted,
    NotePosted,
    NotesDelivered,
    PlanMade,
    PlanRejected,
    PolicyDecided,
    PromptGiven,
    QuestionAnswered,
    QuestionAsked,
    RunDispatched,
    RunFinished,
    RunKind,
    RunStarted,
    StopReason,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
    UserSaid,
    VerifyChecked,
)

__all__ = [
    "AgentStopped",
    "AttemptPlaced",
    "Committed",
    "ContextCompacted",
    "Decided",
    "Decision",
    "Event",
    "EventAdapter",
    "EventStore",
    "ExpertStarted",
    "GateChecked",
    "Integrated",
    "LeadReplied",
    "LeaseChanged",
    "MergeStep",
    "ModelCallFailed",
    "ModelCallFinished",
    "ModelCallRetried",
    "ModelCallStarted",
    "NotePosted",
    "NotesDelivered",
    "ObservedStore",
    "PlanMade",
    "PlanRejected",
    "PolicyDecided",
    "PostgresEventStore",
    "PromptGiven",
    "QuestionAnswered",
    "QuestionAsked",
    "RunDispatched",
    "RunFinished",
    "RunKind",
    "RunLog",
    "RunStarted",
    "SQLiteEventStore",
    "StopReason",
    "TaskFinished",
    "TaskStarted",
    "ToolCalled",
    "ToolReturned",
    "UserSaid",
    "VerifyChecked",
    "open_event_store",
]

if TYPE_CHECKING:
    from plait.events.postgres import PostgresEventStore


def __getattr__(name: str) -> Any:
    if name == "PostgresEventStore":
        from plait.events.postgres import PostgresEventStore

        return PostgresEventStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
