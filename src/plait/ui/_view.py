"""The bodies of `plait status`, `log` and `cost`, and what `plait.cli.cmd_view`'s other commands share, without
the command-line machinery: the typer commands and the fast start (`plait.cli._fast`) both call these.

What a command prints of a run's events (`print_status`, `print_cost`) imports neither the event models nor the
log's store: `plait.ui._fast_view` prints the events it reads from the log's rows with them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.ui._placement import placements
from plait.ui._reading import console, open_store, read_redactor, resolve_run, write_line
from plait.ui.runview import RunView

if TYPE_CHECKING:  # each command imports what only it shows (the tables, the cost breakdown, the log lines)
    from rich.console import Console

    from plait.events.types import Event, GateChecked, MergeStep
    from plait.redact import Redactor
    from plait.ui._live_steer import Steering
    from plait.ui._plain import Page
    from plait.ui.feed import EventFeed

__all__ = [
    "Run",
    "print_cost",
    "print_status",
    "run_cost",
    "run_log",
    "run_status",
    "wide_console",
    "wide_page",
    "write_line",
]


class Run:
    """A run opened for reading: its repository, its log and the redactor for everything shown."""

    def __init__(self, repo_path: Path, ref: str | None) -> None:
        from plait.workspace import Repo

        self.repo = Repo.discover(repo_path)
        self.store = open_store(self.repo, create=False)
        self.run_id = resolve_run(self.store, ref or "last")
        self.redact: Redactor = read_redactor(self.repo.root)

    def feed(self) -> EventFeed:
        from plait.events.runlog import RunLog
        from plait.ui.feed import EventFeed

        return EventFeed(RunLog(self.store, self.run_id), self.redact)

    def events(self) -> list[Event]:
        return self.feed().poll()


def _wide() -> int | None:
    """The width of a page written to a file or a pipe (`COLUMNS`, else 160 cells); None for a terminal's."""
    return None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))


def wide_console() -> Console:
    """Rich output: the terminal's width, or a wide page when written to a file or a pipe."""
    width = _wide()
    return console() if width is None else console(width=width)


def wide_page() -> Page:
    """Where a run's tables are printed, as `wide_console` prints, drawn without rich's console unless styled."""
    from plait.ui._plain import page

    return page(_wide())


def run_status(
    run_ref: str | None,
    repo_path: Path,
    *,
    as_json: bool,
    plain: bool,
    follow: bool,
    interval: float,
    steering: Steering | None = None,
) -> None:
    """Show every agent of a run: the live view in a terminal (its `m` and `s` keys doing what `steering` does),
    else the status once (or on each change)."""
    run = Run(repo_path, run_ref)
    if not (as_json or plain or follow) and sys.stdout.isatty():
        from plait.ui.live import Dashboard

        Dashboard(run.feed(), poll_s=interval, steering=steering).run()
        return
    from plait.events.backends import wait_for_news

    events: list[Event] = []
    feed, first = run.feed(), True
    while True:
        fresh = feed.poll()
        events += fresh
        if fresh or first:
            print_status(run.run_id, events, as_json=as_json, compact=follow)
        first = False
        if not follow or any(e.kind == "run_finished" for e in fresh):
            return
        wait_for_news(run.store, run.run_id, interval)


def print_status(run_id: str, events: list[Event], *, as_json: bool, compact: bool = False) -> None:
    """The status of a run as `plait status --plain` (or `--json`, one line when `compact`) prints it."""
    view = RunView.of(run_id, events)
    placed = placements(events)
    if not as_json:
        from plait.ui.overview import render_status

        render_status(wide_page(), view, placed=placed)
        return
    from plait.ui.summary import summarize

    data = summarize(run_id, events).as_json() | {
        "plan": view.plan,
        "agents": [_agent_json(view, a, placed.get(a)) for a in view.agents],
        "merges": [_fields(m, {"v", "run_id"}) for m in view.merges],
        "gate": [_fields(g, {"v", "run_id", "output"}) for g in view.gates],
    }
    write_line(json.dumps(data) if compact else json.dumps(data, indent=2))


def _fields(event: MergeStep | GateChecked, exclude: set[str]) -> dict[str, Any]:
    """An event's fields as JSON, but those of `exclude`: a model's dump, or the fields of one read from the rows
    (in the model's order)."""
    from plait.ui._fast_events import Fields

    if isinstance(event, Fields):
        return {k: v for k, v in vars(event).items() if k not in exclude}
    return event.model_dump(mode="json", exclude=exclude)


def _agent_json(view: RunView, agent_id: str, placed: tuple[str, str] | None = None) -> dict[str, object]:
    a = view.agents[agent_id]
    node, host = placed or ("", "")
    return {
        "id": a.id,
        "title": a.title,
        "state": a.state,
        "attempt": a.attempt,
        "now": a.now,
        "steps": a.steps,
        "tool_calls": a.tool_calls,
        "retries": a.retries,
        "usage": a.usage.as_json(),
        "cost_usd": round(a.cost_usd, 6),
        "merge": a.merge,
        "summary": a.summary,
        "node": node,
        "host": host,
    }


def run_log(run_ref: str, repo_path: Path, *, as_json: bool, follow: bool, agent: str | None, interval: float) -> None:
    """Print a run's events in order (secrets redacted): one line each, or JSON lines with `as_json`."""
    from plait.events.backends import wait_for_news
    from plait.ui._fast_log import check_agent
    from plait.ui._log_lines import log_line

    run = Run(repo_path, run_ref)
    feed = run.feed()
    start: float | None = None
    first = True
    while True:
        fresh = feed.poll()
        if first and agent is not None:
            check_agent(run.run_id, fresh, agent, waits=follow)
        first = False
        for event in fresh:
            start = event.ts if start is None else start
            if agent is None or event.agent == agent:
                write_line(event.model_dump_json() if as_json else log_line(event, start))
        if not follow or (fresh and fresh[-1].kind == "run_finished"):
            return
        wait_for_news(run.store, run.run_id, interval)


def run_cost(run_ref: str, repo_path: Path, *, as_json: bool) -> None:
    """What a run spent, by agent, by model and by phase, and its speed-up over one agent after another."""
    run = Run(repo_path, run_ref)
    print_cost(run.run_id, run.events(), as_json=as_json)


def print_cost(run_id: str, events: list[Event], *, as_json: bool) -> None:
    """What `plait cost` prints of a run's events: the tables, or JSON."""
    from plait.ui.cost import cost_breakdown
    from plait.ui.overview import render_cost

    costs = cost_breakdown(events)
    if as_json:
        write_line(json.dumps({"run_id": run_id, **costs.as_json()}, indent=2))
        return
    render_cost(wide_page(), costs)
