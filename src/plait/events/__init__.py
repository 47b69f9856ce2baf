"""The event log: typed events and the stores that keep them."""

from plait.events.store import EventStore, SQLiteEventStore
from plait.events.types import (
    SCHEMA_VERSION,
    AgentStopped,
    Committed,
    Decision,
    Event,
    EventAdapter,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallStarted,
    PromptGiven,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)

__all__ = [
    "SCHEMA_VERSION",
    "AgentStopped",
    "Committed",
    "Decision",
    "Event",
    "EventAdapter",
    "EventStore",
    "ModelCallFailed",
    "ModelCallFinished",
    "ModelCallRetried",
    "ModelCallStarted",
    "PromptGiven",
    "RunFinished",
    "RunStarted",
    "SQLiteEventStore",
    "TaskFinished",
    "TaskStarted",
    "ToolCalled",
    "ToolReturned",
]
