"""Commands that look at a run from its event log: `status`, `log`, `cost`, `report` and `trace`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.errors import EnvironmentProblem, UsageError
from plait.events.types import Event, PlanMade, RunFinished
from plait.settings import load_settings
from plait.ui._common import JsonOpt, RepoOpt, console, open_store, resolve_run
from plait.ui._placement import placements
from plait.ui.feed import EventFeed, make_redactor
from plait.ui.runview import RunView
from plait.workspace import Repo

if TYPE_CHECKING:  # each command imports what only it shows (the tables, the cost breakdown, the log lines)
    from rich.console import Console

    from plait.redact import Redactor

__all__ = ["register"]

RunArg = Annotated[str, typer.Argument(metavar="RUN", help="A run id, a unique prefix of one, or `last`.")]
IntervalOpt = Annotated[float, typer.Option("--interval", min=0.05, help="Seconds between reads of the log.")]


class _Run:
    """A run opened for reading: its repository, its log and the redactor for everything shown."""

    def __init__(self, repo_path: Path, ref: str | None) -> None:
        self.repo = Repo.discover(repo_path)
        self.store = open_store(self.repo, create=False)
        self.run_id = resolve_run(self.store, ref or "last")
        self.redact: Redactor = make_redactor(load_settings(self.repo.root).settings)

    def feed(self) -> EventFeed:
        return EventFeed(self.store, self.run_id, self.redact)

    def events(self) -> list[Event]:
        return self.feed().poll()


def _write(line: str) -> None:
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`plait log RUN | head`): stop quietly, without a traceback at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None


def _console() -> Console:
    """Rich output: the terminal's width, or a wide page when written to a file or a pipe."""
    return console() if sys.stdout.isatty() else console(width=int(os.environ.get("COLUMNS", "160")))


def status(
    run_ref: Annotated[
        str | None, typer.Argument(metavar="[RUN]", help="A run id or prefix; the last by default.")
    ] = None,
    repo_path: RepoOpt = Path(),
    as_json: JsonOpt = False,
    plain: Annotated[bool, typer.Option("--plain", help="Print the status once as text, even in a terminal.")] = False,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help="Print the status again each time the run changes, until it ends (a JSON line each with --json).",
        ),
    ] = False,
    interval: IntervalOpt = 0.25,
) -> None:
    """Show every agent of a run (live in a terminal), whether it runs in another process or on another machine.

    With --follow, a server store (PostgreSQL) tells of each change as it is logged, so a second machine sees it
    at once; a SQLite log is read again every --interval seconds.
    """
    run = _Run(repo_path, run_ref)
    if not (as_json or plain or follow) and sys.stdout.isatty():
        from plait.ui.live import Dashboard

        Dashboard(run.feed(), poll_s=interval).run()
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

        render_status(_console(), view, placed=placed)
        return
    from plait.ui.summary import summarize

    data = summarize(run_id, events).as_json() | {
        "plan": view.plan,
        "agents": [_agent_json(view, a, placed.get(a)) for a in view.agents],
        "merges": [m.model_dump(mode="json", exclude={"v", "run_id"}) for m in view.merges],
        "gate": [g.model_dump(mode="json", exclude={"v", "run_id", "output"}) for g in view.gates],
    }
    _write(json.dumps(data) if compact else json.dumps(data, indent=2))


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


def log(
    run_ref: RunArg,
    repo_path: RepoOpt = Path(),
    as_json: JsonOpt = False,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events until the run finishes.")
    ] = False,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's events.")] = None,
    interval: IntervalOpt = 0.25,
) -> None:
    """Print a run's events in order (secrets redacted): one line each, or JSON lines with --json."""
    from plait.events.backends import wait_for_news
    from plait.ui._log_lines import log_line

    run = _Run(repo_path, run_ref)
    feed = run.feed()
    start: float | None = None
    first = True
    while True:
        fresh = feed.poll()
        if first and agent is not None:
            _check_agent(run.run_id, fresh, agent, waits=follow)
        first = False
        for event in fresh:
            start = event.ts if start is None else start
            if agent is None or event.agent == agent:
                _write(event.model_dump_json() if as_json else log_line(event, start))
        if not follow or (fresh and isinstance(fresh[-1], RunFinished)):
            return
        wait_for_news(run.store, run.run_id, interval)


def _check_agent(run_id: str, events: list[Event], agent: str, *, waits: bool) -> None:
    """A usage error for an agent the run does not have, and will not have (a task not yet started may come)."""
    if any(e.agent == agent for e in events):
        return
    ended = any(isinstance(e, RunFinished) for e in events)
    planned = {str(t.get("id")) for e in events if isinstance(e, PlanMade) for t in e.plan.get("tasks", [])}
    if waits and not ended and (not planned or agent in planned):
        return
    known = sorted({e.agent for e in events if e.agent and e.kind not in ("note", "policy")} | planned)
    raise UsageError(f"run {run_id} has no agent '{agent}': its agents are {', '.join(known) or 'none'}")


def cost(run_ref: RunArg, repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """What a run spent, by agent, by model and by phase, and its speed-up over one agent after another."""
    from plait.ui.cost import cost_breakdown
    from plait.ui.overview import render_cost

    run = _Run(repo_path, run_ref)
    costs = cost_breakdown(run.events())
    if as_json:
        _write(json.dumps({"run_id": run.run_id, **costs.as_json()}, indent=2))
        return
    render_cost(_console(), costs)


def report(
    run_ref: RunArg,
    repo_path: RepoOpt = Path(),
    html: Annotated[bool, typer.Option("--html", help="Write a self-contained HTML report.")] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Where to write it (default .git/plait/reports/RUN.html).")
    ] = None,
) -> None:
    """Summarize a run; with --html, write one HTML file (timeline, merges, cost, changes, transcripts)."""
    run = _Run(repo_path, run_ref)
    events = run.events()
    if not html:
        from plait.ui.overview import print_run_summary

        print_run_summary(_console(), events)
        return
    from plait.ui.report import task_diffs, write_report

    view = RunView.of(run.run_id, events)
    diffstat = ""
    if view.base_commit and view.commit:
        diffstat = run.repo.git("diff", "--stat", view.base_commit, view.commit, check=False)
    target = output or run.repo.plait_dir() / "reports" / f"{run.run_id}.html"
    try:
        written = write_report(
            target, events, diffstat=diffstat, redact=run.redact, diffs=task_diffs(run.repo.git, events)
        )
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write the report to {target}: {exc.strerror}") from exc
    _write(str(written))


def trace(run_ref: RunArg, repo_path: RepoOpt = Path()) -> None:
    """Print a run as OpenTelemetry spans (JSON, one per line) with GenAI token usage; needs the otel extra."""
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from plait.ui.tracing import export_run
    except ImportError as exc:
        raise EnvironmentProblem(
            f"tracing needs the OpenTelemetry SDK ({exc.name} is missing): install plait with its otel extra"
        ) from exc
    run = _Run(repo_path, run_ref)
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    export_run(run.events(), provider, redact=run.redact)
    provider.shutdown()
    for span in sorted(spans.get_finished_spans(), key=lambda s: s.start_time or 0):
        _write(str(span.to_json(indent=None)))


def attach(
    run_ref: Annotated[
        str | None, typer.Argument(metavar="[RUN]", help="A run id or prefix; the last by default.")
    ] = None,
    repo_path: RepoOpt = Path(),
    interval: IntervalOpt = 0.25,
) -> None:
    """Follow a run another process runs (`plait run --detach`): the live view in a terminal, else its progress
    lines from the start until it ends."""
    run = _Run(repo_path, run_ref)
    if sys.stdout.isatty() and sys.stdin.isatty():
        from plait.ui.live import Dashboard

        Dashboard(run.feed(), poll_s=interval).run()
        return
    from plait.events.backends import wait_for_news
    from plait.ui.progress import ProgressPrinter

    printer, feed = ProgressPrinter(_console()), run.feed()
    while True:
        fresh = feed.poll()
        for event in fresh:
            printer(event)
        if any(isinstance(e, RunFinished) for e in fresh):
            return
        wait_for_news(run.store, run.run_id, interval)


def register(app: typer.Typer) -> None:
    """Add these commands to the `plait` app."""
    for command in (status, attach, log, cost, report, trace):
        app.command()(command)
