"""Events as an older plait wrote them, read as today's: a stored event's JSON upgraded to the current schema.

Plain JSON, without pydantic: the event models' decoders (`plait.events`) and the fast readers of the SQLite log
(`plait.ui._fast_events`) upgrade every row here before they read it, so that no reader knows an old form.

Schema 1 logged what resume and the views read back as a `decision` with a `topic` and a `data` dict; schema 2
has an event of its own for each of those topics, its fields the old `data`'s keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["SCHEMA_VERSION", "TOPIC_KINDS", "stored_kinds", "upgrade"]

SCHEMA_VERSION = 2
"""The version of the events' JSON this plait writes (each event's `v`); it reads every version up to it."""

TOPIC_KINDS = {
    "lease": "lease",
    "notes": "notes_delivered",
    "context": "compacted",
    "question": "user_said",
    "session": "user_said",
    "reply": "lead_replied",
    "kind": "run_kind",
    "placed": "placed",
    "verify": "verify",
    "dispatch": "dispatched",
    "worktree": "opening",
    "retry": "carried",
    "gate-debts": "debts",
    "external_agent": "agent_session",
    "mcp": "mcp_tools",
}
"""The topics of a schema-1 `decision` that became events of their own, and the kind of each."""

_RENAMED = {"kind": {"kind": "what"}, "dispatch": {"plan": "plan_file"}, "external_agent": {"agent": "cli"}}
"""The keys of a topic's `data` that its event names otherwise."""

_NEW_KINDS = frozenset(TOPIC_KINDS.values())


def upgrade(data: Any) -> Any:
    """`data`, a stored event's JSON, as this plait writes it: a schema-1 decision of a `TOPIC_KINDS` topic becomes
    its event, its `data` the event's fields; every older event is marked with the current version. What is not
    an older event (not an object, or of this version or a newer one) is returned as it is."""
    if not isinstance(data, dict) or data.get("v", 1) != 1:
        return data
    topic = data.get("topic")
    kind = TOPIC_KINDS.get(topic) if data.get("kind") == "decision" and isinstance(topic, str) else None
    if kind is not None and isinstance(data.get("data", {}), dict):
        renamed = _RENAMED.get(str(topic), {})
        fields = {k: v for k, v in data.items() if k != "data"}
        data = {**{renamed.get(k, k): v for k, v in data.get("data", {}).items()}, **fields, "kind": kind}
    return {**data, "v": SCHEMA_VERSION}


def stored_kinds(kinds: Sequence[str]) -> list[str]:
    """The kinds to ask a log's rows for to find events of `kinds`: an old log keeps some of them as decisions."""
    wanted = list(kinds)
    if not _NEW_KINDS.isdisjoint(wanted) and "decision" not in wanted:
        wanted.append("decision")
    return wanted
