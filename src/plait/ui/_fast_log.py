"""`plait log` read straight from the SQLite log's rows (`plait.ui._fast_events`), without pydantic and rich.

The lines are worded by the same functions as the full read's (`plait.ui._log_lines`), from the same fields. Only
a plain `plait log RUN` (perhaps with `--agent`) of a repository with nothing set is read here; whenever the rows
are not what the reader expects, nothing is printed and `read_log` says so: the caller reads the log the full way,
which says what is wrong with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from plait.errors import UsageError
from plait.ui._fast_view import read_run
from plait.ui._log_lines import log_line
from plait.ui._reading import write_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from plait.events.types import Event

__all__ = ["check_agent", "read_log"]


def check_agent(run_id: str, events: Sequence[Event], agent: str, *, waits: bool) -> None:
    """A usage error for an agent the run does not have, and will not have (a task not yet started may come)."""
    if any(e.agent == agent for e in events):
        return
    ended = any(e.kind == "run_finished" for e in events)
    planned = {t.id for e in events if e.kind == "plan" for t in e.plan.tasks}
    if waits and not ended and (not planned or agent in planned):
        return
    known = sorted({e.agent for e in events if e.agent and e.kind not in ("note", "policy")} | planned)
    raise UsageError(f"run {run_id} has no agent '{agent}': its agents are {', '.join(known) or 'none'}")


def read_log(repo_path: Path, run_ref: str, agent: str | None) -> bool:
    """Print a run's events one a line, as `plait log` does; False (nothing printed) when the log has to be read
    the full way: a setting is set, the log is not the SQLite file, or a row is not what the reader reads."""
    run = read_run(repo_path, run_ref)
    if run is None:
        return False
    run_id, events = run.run_id, run.events
    if agent is not None:
        check_agent(run_id, events, agent, waits=False)
    start = events[0].ts if events else 0.0
    for event in events:
        if agent is None or event.agent == agent:
            write_line(log_line(event, start))
    return True
