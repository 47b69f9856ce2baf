"""Commands that look at runs from the event log: `runs`, `show`, `status`, `attach`, `log`, `cost`, `report`
and `trace`.

The bodies of `runs`, `show`, `status`, `log` and `cost` are `plait.ui`'s, which the fast start calls without typer.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from plait.cli._options import JsonOpt, RepoOpt, RunArg
from plait.cli._steering import LoggedSteering
from plait.errors import EnvironmentProblem
from plait.events.types import RunFinished
from plait.ui._view import Run, run_cost, run_log, run_status, wide_console, write_line
from plait.ui.runview import RunView

__all__ = ["attach", "cost", "log", "report", "runs", "show", "status", "trace"]

IntervalOpt = Annotated[float, typer.Option("--interval", min=0.05, help="Seconds between reads of the log.")]


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
    steering = LoggedSteering()
    run_status(run_ref, repo_path, as_json=as_json, plain=plain, follow=follow, interval=interval, steering=steering)


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
    run_log(run_ref, repo_path, as_json=as_json, follow=follow, agent=agent, interval=interval)


def cost(run_ref: RunArg, repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """What a run spent, by agent, by model and by phase, and its speed-up over one agent after another."""
    run_cost(run_ref, repo_path, as_json=as_json)


def report(
    run_ref: RunArg,
    repo_path: RepoOpt = Path(),
    html: Annotated[bool, typer.Option("--html", help="Write a self-contained HTML report.")] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Where to write it (default .git/plait/reports/RUN.html).")
    ] = None,
) -> None:
    """Summarize a run; with --html, write one HTML file (timeline, merges, cost, changes, transcripts)."""
    run = Run(repo_path, run_ref)
    events = run.events()
    if not html:
        from plait.ui.overview import print_run_summary

        print_run_summary(wide_console(), events)
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
    write_line(str(written))


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
    run = Run(repo_path, run_ref)
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    export_run(run.events(), provider, redact=run.redact)
    provider.shutdown()
    for span in sorted(spans.get_finished_spans(), key=lambda s: s.start_time or 0):
        write_line(str(span.to_json(indent=None)))


def attach(
    run_ref: Annotated[
        str | None, typer.Argument(metavar="[RUN]", help="A run id or prefix; the last by default.")
    ] = None,
    repo_path: RepoOpt = Path(),
    interval: IntervalOpt = 0.25,
) -> None:
    """Follow a run another process runs (`plait run --detach`): the live view in a terminal, else its progress
    lines from the start until it ends."""
    run = Run(repo_path, run_ref)
    if sys.stdout.isatty() and sys.stdin.isatty():
        from plait.ui.live import Dashboard

        Dashboard(run.feed(), poll_s=interval, steering=LoggedSteering()).run()
        return
    from plait.events.backends import wait_for_news
    from plait.ui.progress import ProgressPrinter

    printer, feed = ProgressPrinter(wide_console()), run.feed()
    while True:
        fresh = feed.poll()
        for event in fresh:
            printer(event)
        if any(isinstance(e, RunFinished) for e in fresh):
            return
        wait_for_news(run.store, run.run_id, interval)


def runs(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """List the runs of this repository, newest last."""
    from plait.ui._runs import list_runs

    list_runs(repo_path, as_json)


def show(
    run_ref: RunArg,
    task: Annotated[str | None, typer.Argument(help="Only this agent's part.")] = None,
    repo_path: RepoOpt = Path(),
    full: Annotated[bool, typer.Option("--full", help="Do not shorten long tool output.")] = False,
    no_pager: Annotated[
        bool, typer.Option("--no-pager", help="Print straight to the terminal, not through $PAGER.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show a run's transcript: messages, tool calls and results, and the diff of a run that changed code.

    In a terminal it goes through your pager ($PAGER, else `less -R`); lines are never cut."""
    from plait.ui._runs import show_run

    show_run(run_ref, task, repo_path, full=full, no_pager=no_pager, as_json=as_json)
