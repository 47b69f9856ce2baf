"""What every event has: the schema it was written in, its run and agent, when, and its place in the log."""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict, Field

from plait.log_upgrade import SCHEMA_VERSION


class _Event(BaseModel):
    # Built when an event of the kind is first made or read: a process reads and writes only a few of the kinds.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    v: int = SCHEMA_VERSION
    run_id: str
    agent: str = ""
    """The agent (task id, `planner`...) the event belongs to; empty for run-level events."""
    ts: float = Field(default_factory=time.time)
    seq: int = 0
    """Position in the store, assigned on append."""
