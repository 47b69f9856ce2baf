"""`plait runs`' table read straight from the rows of the SQLite log, without the event models.

Validating every event of every run with pydantic (and importing pydantic and the 25 event models first) costs
more than the rest of `plait runs`. The table shows six things of a run: its id, status, model, model calls,
dollars and task; they are folded here from the rows' JSON as `RunView` folds them from the events (a test keeps
the two equal). An event this does not read as it expects (a newer schema, a kind or a field of another shape, a
run that logged its own prices) makes it give up, and the events are then read the full way. What it does not
read is not validated: a malformed field the table does not show is found by the commands that show it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from plait.log_upgrade import SCHEMA_VERSION
from plait.models.rates import DEFAULT_RATES, Rated, RateTable
from plait.ui._usd import dollars

__all__ = ["RunRow", "run_rows"]

_PRICES = RateTable[Rated](DEFAULT_RATES)
"""The price table of a run that logged no prices of its own."""

_KINDS = frozenset(
    "run_started run_finished task_started task_finished prompt model_request model_retry model_response model_error"
    " tool_call tool_result commit decision agent_stopped plan plan_rejected merge gate integrated policy note expert"
    " question answer steer lease notes_delivered compacted user_said lead_replied"
    " run_kind placed verify dispatched opening carried debts agent_session mcp_tools".split()
)
_FINISHED = frozenset({"done", "incomplete", "failed", "interrupted"})


class _Unread(Exception):
    """An event this fold does not read as it expects: the log is read the full way instead."""


def _text(data: dict[str, object], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise _Unread
    return value


@dataclass
class RunRow:
    """What `plait runs` shows of one run."""

    run_id: str
    task: str = ""
    model: str = ""
    status: str = "running"
    model_calls: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    _calling: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def cost_text(self) -> str:
        return dollars(self.cost_usd, self.model_calls, self.unpriced_calls)

    def add(self, data: object) -> None:
        """Fold one event's JSON in; `_Unread` when it is not what this fold reads."""
        if not isinstance(data, dict):
            raise _Unread
        version, kind, agent = data.get("v", SCHEMA_VERSION), data.get("kind"), _text(data, "agent", "")
        if type(version) is not int or version > SCHEMA_VERSION or kind not in _KINDS:
            raise _Unread
        if kind == "run_started":
            settings = data.get("settings", {})
            if not isinstance(settings, dict) or settings.get("prices"):  # its own prices: `logged_prices` reads them
                raise _Unread
            self.task, self.model, self.status = _text(data, "task"), _text(data, "model"), "running"
        elif kind == "run_finished":
            self.status = _text(data, "status")
            if self.status not in _FINISHED:
                raise _Unread
        elif kind == "model_request":
            self._calling[agent] = _text(data, "model")
        elif kind == "model_response":
            response, cost = data.get("response"), data.get("cost_usd", 0.0)
            if not isinstance(response, dict) or isinstance(cost, bool) or not isinstance(cost, int | float):
                raise _Unread
            model = self._calling.pop(agent, "") or _text(response, "model", "") or self.model or "?"
            self.model_calls += 1
            self.unpriced_calls += _PRICES.price(model) is None
            self.cost_usd += float(cost)


def run_rows(log: Path) -> list[RunRow] | None:
    """The rows of every run in the SQLite log `log`, oldest first; None when they have to be read the full way
    (the log cannot be opened read-only, or an event is not what this fold reads)."""
    try:
        db = sqlite3.connect(f"{log.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT run_id, payload FROM events ORDER BY seq").fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    runs: dict[str, RunRow] = {}
    try:
        for run_id, payload in rows:
            if not isinstance(payload, str):
                return None
            runs.setdefault(run_id, RunRow(run_id)).add(json.loads(payload))
    except (_Unread, json.JSONDecodeError):
        return None
    return list(runs.values())
