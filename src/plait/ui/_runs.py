"""`plait runs` and `plait show`, without the command-line machinery: the typer commands and the fast start
(`plait.cli._fast`) both call these; `print_transcript` prints events read from the log's rows too
(`plait.ui._fast_view`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from plait.errors import UsageError
from plait.textsafe import visible
from plait.ui import _reading
from plait.ui._reading import has_log, open_store, read_redactor, resolve_run, settings_if_any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from plait.events.store import EventStore
    from plait.events.types import Event
    from plait.redact import Redactor
    from plait.ui._grid import Grid
    from plait.ui.summary import RunSummary
    from plait.workspace import Repo


class _Shown(Protocol):
    """What the table shows of a run: its summary, or its row read without the event models."""

    run_id: str
    task: str
    model: str
    status: str
    model_calls: int

    @property
    def cost_text(self) -> str: ...


def _summaries(store: EventStore) -> list[RunSummary]:
    from plait.ui.summary import summarize

    return [summarize(run_id, store.events(run_id)) for run_id in store.run_ids()]


def list_runs(repo_path: Path, as_json: bool) -> None:
    """List the runs of this repository, newest last."""
    from plait.workspace import Repo

    repo = Repo.discover(repo_path)
    rows: Sequence[_Shown] | None = None
    if not as_json and settings_if_any(repo.root) is None:  # the SQLite log, read without the event models
        from plait.ui._fast_runs import run_rows

        log = repo.common_dir / "plait" / "events.db"
        rows = run_rows(log) if log.exists() else []
    if rows is None:
        summaries = _summaries(open_store(repo, create=False)) if has_log(repo) else []
        if as_json:
            import json

            if summaries:  # a log written before events were redacted on the way in holds the task as given
                redact = read_redactor(repo.root)
                for s in summaries:
                    s.task, s.model, s.reason = (visible(redact(x)) for x in (s.task, s.model, s.reason))
            _reading.out.print_json(json.dumps([s.as_json() for s in summaries]), ensure_ascii=True)
            return
        rows = summaries
    from plait.ui._plain import page

    if not rows:
        page(soft_wrap=True).print("no runs yet: start one with `plait run TASK`")
        return
    page(soft_wrap=True).print(_table(rows, read_redactor(repo.root)))


def _table(rows: Sequence[_Shown], redact: Redactor) -> Grid:
    """The runs as a table: a log written before events were redacted on the way in holds the task as given."""
    from plait.ui._grid import Column, Grid
    from plait.ui._plain import escape

    # the id is what --follow-up, --resume and every other command take: it is never cut; the model is
    # shortened and the task wraps instead (tokens are in --json and `plait cost`)
    table = Grid(
        Column("run", no_wrap=True, min_width=max(len(s.run_id) for s in rows)),
        Column("status", no_wrap=True),
        Column("model", overflow="ellipsis", max_width=22),
        Column("calls", justify="right", no_wrap=True),
        Column("cost", justify="right", no_wrap=True),
        Column("task", min_width=16, overflow="fold"),
        boxed=False,
        header_style="bold",
    )
    for s in rows:
        status = s.status if s.status != "running" else "unfinished"
        model, task = visible(redact(s.model)), visible(redact(s.task))
        task = task.strip().splitlines()[0] if task.strip() else ""
        model, task = escape(visible(model)), escape(visible(task[:120]))
        table.add_row(s.run_id, status, model, str(s.model_calls), s.cost_text, task)
    return table


def show_run(run_ref: str, task: str | None, repo_path: Path, *, full: bool, no_pager: bool, as_json: bool) -> None:
    """Show a run's transcript: messages, tool calls and results, and the diff of a run that changed code."""
    from plait.ui.feed import redact_event
    from plait.workspace import Repo

    repo = Repo.discover(repo_path)
    store = open_store(repo, create=False)
    run_id = resolve_run(store, run_ref)
    redact = read_redactor(repo.root)
    events = [redact_event(e, redact) for e in store.events(run_id, agent=None)]
    if not as_json:
        print_transcript(repo, run_id, events, task, redact, full=full, no_pager=no_pager)
        return
    _check_agent(run_id, events, task)
    for event in events:
        if task is None or event.agent in ("", task):
            sys.stdout.write(event.model_dump_json() + "\n")


def _check_agent(run_id: str, events: Sequence[Event], task: str | None) -> None:
    if task is not None and all(e.agent != task for e in events):
        agents = sorted({e.agent for e in events if e.agent and e.kind not in ("note", "policy")})
        raise UsageError(f"run {run_id} has no agent '{task}': its agents are {', '.join(agents) or 'none'}")


def print_transcript(
    repo: Repo, run_id: str, events: list[Event], task: str | None, redact: Redactor, *, full: bool, no_pager: bool
) -> None:
    """What `plait show` prints of a run's events (redacted and made visible), through the pager in a terminal:
    the transcript of the run or of its agent `task`, then the diff of what the run changed."""
    from plait.ui.summary import summarize
    from plait.ui.transcript import render_transcript

    _check_agent(run_id, events, task)
    s = summarize(run_id, events)
    diff = ""
    if s.commit and s.base_commit:
        diff = redact(repo.git("diff", "--stat", "--patch", s.base_commit, s.commit, check=False))
    from plait.ui._plain import plain_page

    plain = plain_page(soft_wrap=True)  # not a terminal: drawn as rich draws it unstyled, without the pager
    if plain is not None:
        render_transcript(plain, run_id, events, diff=diff, agent=task, max_lines=0 if full else 40, summary=s)
        return
    out = _reading.out
    if no_pager or not out.is_terminal:
        render_transcript(out, run_id, events, diff=diff, agent=task, max_lines=0 if full else 40, summary=s)
        return
    os.environ.setdefault("LESS", "-R")  # the pager shows the colours instead of their escape codes
    with out.pager(styles=True):
        render_transcript(out, run_id, events, diff=diff, agent=task, max_lines=0 if full else 40, summary=s)
