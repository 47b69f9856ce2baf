"""A run's events read straight from the rows of the SQLite log, as plain objects instead of pydantic models.

Importing pydantic and building the 25 event models costs more than `plait log` does with them. Here each row's
JSON is checked against a copy of the models' fields (`FIELDS`, a test keeps it equal to the models): every field
of the JSON type the model takes, a literal one of its values, the required ones present, no other; defaults are
filled in, nested models (a response, its usage, a tool call) become objects too. A row that is anything else
(a newer schema, an unknown kind, a value pydantic would convert or refuse) makes the reader give up, and the
caller reads the log the full way, which reports a malformed event as it always has.

The objects have the models' attributes, so the words of `plait.ui._describe` read them as they read events.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plait.log_upgrade import SCHEMA_VERSION, upgrade
from plait.redact import Redactor, scrub_strings, strings_in
from plait.textsafe import visible

__all__ = ["FIELDS", "MODELS", "Fields", "Unread", "decode", "read_events", "run_ids"]

REQUIRED: Any = ...
"""The default of a field the JSON must hold."""

_USAGE: dict[str, tuple[Any, Any]] = {f"{k}_tokens": ("int", 0) for k in ("input", "output", "cached", "cache_write")}
MODELS: dict[str, dict[str, tuple[Any, Any]]] = {
    "Usage": _USAGE,
    "ToolCall": {
        "id": ("str", REQUIRED),
        "name": ("str", REQUIRED),
        "arguments": (("optional", "dict"), REQUIRED),
        "raw_arguments": ("str", ""),
    },
    "Reasoning": {"id": ("str", REQUIRED), "encrypted_content": ("str", ""), "summary": (("tuple", "str"), ())},
    "ModelResponse": {
        "text": ("str", ""),
        "tool_calls": (("tuple", "ToolCall"), ()),
        "usage": ("Usage", {}),
        "model": ("str", ""),
        "stop_reason": ("str", ""),
        "reasoning": (("tuple", "Reasoning"), ()),
    },
}
_LISTED: dict[str, tuple[Any, Any]] = {k: ("list[str]", []) for k in ("writes", "reads", "provides", "consumes")}
MODELS.update(
    {
        "Contract": {
            "name": ("str", REQUIRED),
            "signature": ("str", REQUIRED),
            "owner": ("str", ""),
            "path": ("str", ""),
        },
        "ExpertSpec": {"name": ("str", REQUIRED), "area": ("list[str]", []), "brief": ("str", "")},
        "PlanTask": {
            **{"id": ("str", REQUIRED), "title": ("str", REQUIRED), "instructions": ("str", REQUIRED), **_LISTED},
            **{"depends_on": ("list[str]", []), "kind": (("work", "contract"), "work"), "agent": ("str", "")},
        },
        "ToolSpec": {"name": ("str", REQUIRED), "description": ("str", REQUIRED), "parameters": ("dict", REQUIRED)},
        "OwedTests": {"tests": ("list[str]", []), "by": ("str", ""), "until": ("list[str]", [])},
        "Plan": {
            **{"mode": (("single", "parallel"), REQUIRED), "reason": ("str", REQUIRED)},
            **{"tasks": (("list", "PlanTask"), REQUIRED), "contracts": (("list", "Contract"), [])},
            **{"shared": ("list[str]", []), "experts": (("list", "ExpertSpec"), [])},
        },
    }
)
"""The fields of the models events hold (`plait.messages`, `plait.plan_model`, `OwedTests`): each name to its type and
default; a model's default is the JSON it is read from. A plan's fields are read as it was logged, from a valid
plan: what its validators would check again (a task id's shape, an expert's name) is taken as written."""

_S, _I, _F, _B, _L, _D = "str", "int", "float", "bool", "list[str]", "dict"
_R = REQUIRED
_BASE: dict[str, tuple[Any, Any]] = {
    **{"v": (_I, SCHEMA_VERSION), "run_id": (_S, _R), "agent": (_S, ""), "ts": (_F, _R), "seq": (_I, 0)}
}
_DECIDED: dict[str, tuple[Any, Any]] = {"decision": (_S, _R), "reason": (_S, "")}
_STEP: dict[str, tuple[Any, Any]] = {"step": (_I, _R), "attempt": (_I, _R)}
_OWN: dict[str, dict[str, tuple[Any, Any]]] = {
    "run_started": {
        **{k: (_S, _R) for k in ("task", "repo", "base_commit", "base_ref", "model")},
        **{"settings": (_D, {}), "snapshot": (_B, False)},
    },
    "run_finished": {
        "status": (("done", "incomplete", "failed", "interrupted"), _R),
        **{k: (_S, "") for k in ("reason", "branch", "commit")},
    },
    "task_started": {**{k: (_S, _R) for k in ("title", "branch", "worktree", "base_commit")}, "attempt": (_I, 1)},
    "task_finished": {
        "status": (("done", "failed", "interrupted", "dropped"), _R),
        **{k: (_S, "") for k in ("summary", "reason", "commit")},
    },
    "prompt": {"attempt": (_I, 1), "system": (_S, _R), "user": (_S, _R), "tools": (_L, [])},
    "model_request": {
        **{"call": (_I, _R), "attempt": (_I, 1), "req_hash": (_S, _R), "model": (_S, _R), "messages": (_I, _R)}
    },
    "model_retry": {"call": (_I, _R), "attempt": (_I, _R), "wait_s": (_F, _R), "reason": (_S, _R)},
    "model_response": {
        **{"call": (_I, _R), "attempt": (_I, 1), "req_hash": (_S, _R), "response": ("ModelResponse", _R)},
        **{"cost_usd": (_F, 0.0), "duration_s": (_F, 0.0)},
    },
    "model_error": {"call": (_I, _R), "attempt": (_I, 1), "error": (_S, _R)},
    "tool_call": {"call": ("ToolCall", _R), "step": (_I, 0), "attempt": (_I, 1)},
    "tool_result": {
        **{"call_id": (_S, _R), "name": (_S, _R), "output": (_S, _R), "is_error": (_B, False)},
        **{"format_error": (_B, False), "duration_s": (_F, 0.0), "step": (_I, 0), "attempt": (_I, 1)},
        "checkpoint": (_S, ""),
    },
    "commit": {"sha": (_S, _R), "branch": (_S, _R), "message": (_S, _R), "files": (_L, [])},
    "decision": {**_DECIDED, "topic": (_S, _R), "data": (_D, {})},
    "lease": {
        **_DECIDED,
        "topic": (("lease",), "lease"),
        "action": (("claim", "wait", "refuse", "cycle", "release", "expire", "update"), _R),
        **{"path": (_S, _R), "task": (_S, _R), "holder": (_S, _R), "why": (_S, _R), "until": (_F, 0.0)},
        **{"after": (_L, []), "waited": (_F, 0.0), "cycle": (_L, []), "head": (_S, ""), "conflicts": (_L, [])},
    },
    "notes_delivered": {**_DECIDED, "topic": (("notes",), "notes"), "notes": (_L, _R), **_STEP},
    "compacted": {
        **{**_DECIDED, "topic": (("context",), "context"), **_STEP, "budget": (_I, 0)},
        **{k: (_I, 0) for k in ("messages_before", "messages_after", "tokens_before", "tokens_after", "summarised")},
    },
    "user_said": {**_DECIDED, "topic": (("question", "session"), _R), "turn": (_I, _R), "text": (_S, _R)},
    "run_kind": {**_DECIDED, "topic": (("kind",), "kind"), "what": (("investigation", "session"), _R)},
    "placed": {**_DECIDED, "topic": (("placed",), "placed"), "node": (_S, _R), "host": (_S, _R), "attempt": (_I, _R)},
    "verify": {
        **{**_DECIDED, "topic": (("verify",), "verify"), "commit": (_S, _R), "command": (_S, _R)},
        **{"state": (("none", "passes", "fails", "cannot-run"), _R), "output": (_S, "")},
    },
    "dispatched": {
        **{**_DECIDED, "topic": (("dispatch",), "dispatch"), "run": (_S, _R), "task": (_S, _R)},
        **{"plan_file": (_S, ""), "key": (_S, _R)},
    },
    "opening": {
        **{**_DECIDED, "topic": (("worktree",), "worktree"), "attempt": (_I, _R)},
        **{k: (_S, "") for k in ("branch", "path", "base", "why", "detail")},
    },
    "carried": {
        **{**_DECIDED, "topic": (("retry",), "retry"), "attempt": (_I, _R), "number": (_I, _R)},
        **{"commit": (_S, ""), "head": (_S, ""), "files": (_L, []), "conflicts": (_L, [])},
        **{"put_back": (("list", _L), []), "lost": (_S, "")},
    },
    "debts": {**_DECIDED, "topic": (("gate-debts",), "gate-debts"), "debts": (("list", "OwedTests"), [])},
    "agent_session": {
        **{**_DECIDED, "topic": (("external_agent",), "external_agent"), "cli": (_S, _R), "session": (_S, _R)},
        **{"attempt": (_I, _R), "lost": (_B, False), "model": (_S, "")},
    },
    "mcp_tools": {
        **{**_DECIDED, "topic": (("mcp",), "mcp"), "attempt": (_I, _R)},
        **{"tools": (("list", "ToolSpec"), []), "failed": (_D, {})},
    },
    "lead_replied": {
        **{**_DECIDED, "topic": (("reply",), "reply"), "turn": (_I, _R), "text": (_S, _R), "ok": (_B, _R)},
        "disagreements": (_S, ""),
    },
    "agent_stopped": {
        "reason": (
            (
                *("finished", "step_limit", "token_limit", "budget", "wall_time", "format_errors"),
                *("model_error", "model_refused", "interrupted", "stopped_by_user"),
            ),
            _R,
        ),
        **{"summary": (_S, ""), "steps": (_I, 0), "usage": ("Usage", {}), "cost_usd": (_F, 0.0)},
    },
    "plan": {"plan": ("Plan", _R), "source": (("planner", "file", "single"), "planner")},
    "plan_rejected": {"attempt": (_I, _R), "error": (_S, _R)},
    "merge": {
        **{"task": (_S, _R), "branch": (_S, _R), "rung": (("git", "deterministic", "structured", "llm", "redo"), _R)},
        **{"outcome": (("clean", "resolved", "conflict", "failed"), _R), "files": (_L, [])},
        **{"detail": (_S, ""), "commit": (_S, "")},
    },
    "gate": {
        **{"commit": (_S, _R), "stage": (("parse", "semantic", "verify"), _R), "passed": (_B, _R)},
        **{"tasks": (_L, []), "output": (_S, ""), "duration_s": (_F, 0.0)},
    },
    "integrated": {
        **{"branch": (_S, _R), "commit": (_S, _R), "tasks": (_L, []), "ejected": (_L, []), "reason": (_S, "")}
    },
    "policy": {
        **{"action": (("command", "read", "write", "network"), _R), "subject": (_S, _R)},
        **{"verdict": (("allow", "ask", "deny"), _R), "rule": (_S, ""), "reason": (_S, "")},
    },
    "note": {"topic": (_S, _R), "text": (_S, _R), "paths": (_L, []), "to": (_L, [])},
    "expert": {
        **{"name": (_S, _R), "area": (_L, []), "brief": (_S, ""), "commit": (_S, "")},
        "origin": (("config", "planner", "investigation", "session"), "config"),
    },
    "question": {"asker": (_S, _R), "number": (_I, _R), "question": (_S, _R), "key": (_S, "")},
    "answer": {
        **{"asker": (_S, _R), "number": (_I, _R), "answer": (_S, _R), "is_error": (_B, False)},
        **{"usage": ("Usage", {}), "cost_usd": (_F, 0.0), "read_tokens": (_I, 0), "reads": (_I, 0)},
        **{"references": (_L, []), "not_checked": (_S, "")},
    },
    "steer": {"action": (("say", "pause", "resume", "stop"), _R), "text": (_S, ""), "retry": (_B, False)},
}
FIELDS: dict[str, dict[str, tuple[Any, Any]]] = {
    kind: {**_BASE, "kind": ((kind,), kind), **own} for kind, own in _OWN.items()
}
"""Each kind of event's fields (`plait.events.types`), as `MODELS` has them."""


class Unread(Exception):
    """A row this reader does not read as the models would: the log is read the full way instead."""


class Fields:
    """An event, or a model inside one, as its JSON gave it: each field an attribute."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


def _value(kind: Any, value: Any) -> Any:
    if kind == "str" or kind == "dict":
        if type(value) is not (str if kind == "str" else dict):
            raise Unread
        return value
    if kind == "int" or kind == "bool":
        if type(value) is not (int if kind == "int" else bool):
            raise Unread
        return value
    if kind == "float":
        if type(value) is not float and type(value) is not int:
            raise Unread
        return float(value)
    if kind == "list[str]":
        if type(value) is not list or any(type(v) is not str for v in value):
            raise Unread
        return list(value)
    if isinstance(kind, str):
        return decode(MODELS[kind], value)
    if kind[0] == "optional":
        return None if value is None else _value(kind[1], value)
    if kind[0] == "tuple" or kind[0] == "list":
        if type(value) is not list:
            raise Unread
        items = [_value(kind[1], v) for v in value]
        return tuple(items) if kind[0] == "tuple" else items
    if type(value) is not str or value not in kind:  # a literal
        raise Unread
    return value


def decode(fields: dict[str, tuple[Any, Any]], data: Any) -> Fields:
    """`data` read as a model of `fields` would read it; `Unread` when it would read it otherwise, or refuse it."""
    if type(data) is not dict or not data.keys() <= fields.keys():
        raise Unread
    values: dict[str, Any] = {}
    for name, (kind, default) in fields.items():
        if name in data:
            values[name] = _value(kind, data[name])
        elif default is REQUIRED:
            raise Unread
        elif isinstance(kind, str) and kind in MODELS:
            values[name] = decode(MODELS[kind], default)
        else:
            values[name] = type(default)(default)  # a copy of a list or a dict
    return Fields(values)


def _rows(log: Path, sql: str, args: tuple[object, ...] = ()) -> list[Any] | None:
    try:
        db = sqlite3.connect(f"{log.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return None


def run_ids(log: Path) -> list[str] | None:
    """The runs in the SQLite log `log`, oldest first, as `SQLiteEventStore.run_ids` lists them; None when it
    cannot be read here."""
    rows = _rows(log, "SELECT run_id FROM events GROUP BY run_id ORDER BY MIN(seq)")
    return None if rows is None else [str(r[0]) for r in rows]


def read_events(log: Path, run_id: str, redact: Redactor) -> list[Fields] | None:
    """The events of `run_id` in order, every string shown as `plait.ui.feed.redact_events` shows it; None when a
    row is not what this reader reads, or the log cannot be read here."""
    rows = _rows(log, "SELECT seq, payload FROM events WHERE run_id = ? AND seq > 0 ORDER BY seq", (run_id,))
    if rows is None:
        return None
    try:
        read = [(seq, json.loads(payload) if isinstance(payload, str) else None) for seq, payload in rows]
    except json.JSONDecodeError:
        return None
    texts = [strings_in(data) for _, data in read]
    change: Callable[[str], str] = visible  # most logs hold nothing to redact: one pass says so
    joined = ["".join(row) for row in texts]  # a row's strings change only if their concatenation does
    changed = [not text.isprintable() and visible(text) != text for text in joined]
    if not redact.finds_nothing([text for row in texts for text in row]):
        change, changed = (lambda text: visible(redact(text))), [True] * len(read)
    events = []
    try:
        for (seq, data), scrub in zip(read, changed, strict=True):
            data = upgrade(data)
            if type(data) is not dict or data.get("kind") not in FIELDS or data.get("v") != SCHEMA_VERSION:
                return None
            kept = {k: data[k] for k in ("v", "kind") if k in data} | {"seq": seq}
            shown = scrub_strings(data, change) if scrub else data  # only a row with something to show otherwise
            events.append(decode(FIELDS[data["kind"]], shown | kept))
    except Unread:
        return None
    return events
