"""The bodies of `plait status`, `log` and `cost`, and what `plait.cli.cmd_view`'s other commands share, without
the command-line machinery: the typer commands and the fast start (`plait.cli._fast`) both call these."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from plait.events.runlog import RunLog
from plait.events.types import Event, RunFinished
from plait.ui._placement import placements
from plait.ui._reading import console, open_store, read_redactor, resolve_run, write_line
from plait.ui.feed import EventFeed
from plait.ui.runview import RunView
from plait.workspace import Repo

if TYPE_CHECKING:  # each command imports what only it shows (the tables, the cost breakdown, the log lines)
    from rich.console import Console

    from plait.redact import Redactor
    from plait.ui._live_steer import Steering

__all__ = ["Run", "run_cost", "run_log", "run_status", "write_line", "wide_console"]


class Run:
    """A run opened for reading: its repository, its log and the redactor for everything shown."""

    def __init__(self, repo_path: Path, ref: str | None) -> None:
        self.repo = Repo.discover(repo_path)
        self.store = open_store(self.repo, create=False)
        self.run_id = resolve_run(self.store, ref or "last")
        self.redact: Redactor = read_redactor(self.repo.root)

    def feed(self) -> EventFeed:
        return EventFeed(RunLog(self.store, self.run_id), self.redact)

    def events(self) -> list[Event]:
        return self.feed().poll()


def wide_console() -> Console:
    """Rich output: the terminal's width, or a wide page when written to a file or a pipe."""
    return console() if sys.stdout.isatty() else console(width=int(os.environ.get("COLUMNS", "160")))


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

    feed, events, first = run.feed(), list[Event](), True
    while True:
        fresh = feed.poll()
        events += fresh
        if fresh or first:
            _show_status(run.run_id, events, as_json=as_json, compact=follow)
        first = False
        if not follow or any(isinstance(e, RunFinished) for e in fresh):
            return
        wait_for_news(run.store, run.run_id, interval)


def _show_status(run_id: str, events: list[Event], *, as_json: bool, compact: bool) -> None:
    view = RunView.of(run_id, events)
    placed = placements(events)
    if not as_json:
        from plait.ui.overview import render_status

        render_status(wide_console(), view, placed=placed)
        return
    from plait.ui.summary import summarize

    data = summarize(run_id, events).as_json() | {
        "plan": view.plan,
        "agents": [_agent_json(view, a, placed.get(a)) for a in view.agents],
        "merges": [m.model_dump(mode="json", exclude={"v", "run_id"}) for m in view.merges],
        "gate": [g.model_dump(mode="json", exclude={"v", "run_id", "output"}) for g in view.gates],
    }
    write_line(json.dumps(data) if compact else json.dumps(data, indent=2))


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
        "usage": a.usage.model_dump(),
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
        if not follow or (fresh and isinstance(fresh[-1], RunFinished)):
            return
        wait_for_news(run.store, run.run_id, interval)


def run_cost(run_ref: str, repo_path: Path, *, as_json: bool) -> None:
    """What a run spent, by agent, by model and by phase, and its speed-up over one agent after another."""
    from plait.ui.cost import cost_breakdown
    from plait.ui.overview import render_cost

    run = Run(repo_path, run_ref)
    costs = cost_breakdown(run.events())
    if as_json:
        write_line(json.dumps({"run_id": run.run_id, **costs.as_json()}, indent=2))
        return
    render_cost(wide_console(), costs)
