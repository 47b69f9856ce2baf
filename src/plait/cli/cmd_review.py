"""`plait review RUN`: each task's work, summary, cost, merge and gate; `--drop TASK` integrates the rest again."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from plait.cli._options import JsonOpt, RepoOpt, RunArg
from plait.errors import UsageError
from plait.events.runlog import RunLog
from plait.events.store import EventStore, RedactingStore
from plait.reconcile.queue import TaskBranch
from plait.run.results import has_result
from plait.run.review import Reintegrated, reintegrate, resolvers_for, taken_along
from plait.settings import load_settings
from plait.ui import _fmt
from plait.ui._common import err, open_store, out, resolve_run
from plait.ui._review import Review, TaskReview, review_of
from plait.ui.feed import make_redactor
from plait.workspace import Repo

__all__ = ["kept_branches", "review"]


def kept_branches(review: Review, keep: list[TaskReview]) -> list[TaskBranch]:
    """The tasks as the merge queue takes them, in the order they landed, each told which kept tasks build on it."""
    ids = {t.id for t in keep}
    return [t.as_branch(tuple(d.id for d in keep if t.id in d.depends_on and d.id in ids)) for t in keep]


def review(
    run_ref: RunArg,
    diff: Annotated[bool, typer.Option("--diff", help="Print each task's patches, not only a diffstat.")] = False,
    drop: Annotated[
        list[str] | None,
        typer.Option("--drop", metavar="TASK", help="Integrate the rest again without this task (repeatable)."),
    ] = None,
    no_llm: Annotated[bool, typer.Option("--no-llm", help="With --drop: only the rungs that need no model.")] = False,
    as_json: JsonOpt = False,
    repo_path: RepoOpt = Path(),
) -> None:
    """Review a run task by task: its change against the base and the integration head, its summary, cost,
    the merge rung that placed it and the gate's verdict. Every task is kept unless you --drop it.

    With --drop, the kept tasks are merged and gated again onto a new integration branch of the run, which
    `plait status` and `plait apply` then take; a task that depends on a dropped one is dropped with it."""
    repo = Repo.discover(repo_path)
    settings = load_settings(repo.root).settings
    store = RedactingStore(open_store(repo, create=False), make_redactor(settings))
    try:
        run_id = resolve_run(store, run_ref, acts_on=lambda r: has_result(RunLog(store, r)), what="run with a result")
        seen = review_of(repo, RunLog(store, run_id), patches=diff)
        if drop:
            done = _drop(repo, store, seen, list(dict.fromkeys(drop)), no_llm)
            seen = review_of(repo, RunLog(store, run_id), patches=diff)
    finally:
        store.close()
    redact = make_redactor(settings)
    if as_json:
        data = seen.as_json()
        if drop:
            data["dropped"] = dict(done.dropped)
            data["ejected"] = [{"task": e.task_id, "reason": e.reason} for e in done.report.ejected]
        sys.stdout.write(redact(json.dumps(data, indent=2)) + "\n")
    else:
        _print(seen, diff, redact)
        if drop:
            _print_drop(done)
    if drop and done.report.ejected:
        raise typer.Exit(1)


def _drop(repo: Repo, store: EventStore, seen: Review, asked: list[str], no_llm: bool) -> Reintegrated:
    known = {t.id: t for t in seen.tasks}
    unknown = [t for t in asked if t not in known]
    if unknown:
        raise UsageError(f"run {seen.run_id} has no task {', '.join(unknown)}: its tasks are {', '.join(known)}")
    landed = [t for t in seen.tasks if t.in_result]
    dropped = taken_along(repo, [t.as_branch() for t in seen.tasks if t.commit], asked)
    keep = sorted((t for t in landed if t.id not in dropped), key=lambda t: _order(repo, seen, t))
    settings = load_settings(repo.root).settings
    warn = lambda line: err.print(f"[yellow]note:[/] {escape(line)}", highlight=False)  # noqa: E731
    return reintegrate(
        repo,
        RunLog(store, seen.run_id),
        seen.base,
        kept_branches(seen, keep),
        dropped=dropped,
        settings=settings,
        resolvers=resolvers_for(settings, no_llm, RunLog(store, seen.run_id), warn),
        warn=warn,
    )


def _order(repo: Repo, seen: Review, task: TaskReview) -> int:
    """How far down the integration's history the task landed: integrating again keeps that order."""
    chain = repo.git("rev-list", "--first-parent", "--reverse", f"{seen.base}..{seen.head}", check=False).split()
    return next((i for i, c in enumerate(chain) if repo.is_ancestor(task.commit, c)), len(chain))


def _print(seen: Review, diff: bool, redact: Callable[[str], str]) -> None:
    where = f"{seen.branch} @ {seen.head[:10]}" if seen.head else "no result"
    out.print(
        f"[bold]run {escape(seen.run_id)}[/] · {escape(seen.status)} · {seen.cost} · "
        f"base {seen.base[:10]} → {escape(where)}",
        highlight=False,
    )
    if seen.task:
        out.print(f"task: {escape(_fmt.one_line(seen.task, 100))}", highlight=False)
    table = Table("task", "state", "cost", "merged by", "gate", "files", "vs head", box=None, pad_edge=False)
    for t in seen.tasks:
        head = "" if not t.commit else ("as its branch" if not t.stat_head else "differs")
        files = str(len(t.files)) if t.commit else "no commit"
        state = t.state + ("" if t.in_result or not t.commit else ", not in result")
        table.add_row(escape(t.id), escape(state), t.cost, escape(t.merged_by), escape(t.gate), files, head)
    out.print(table)
    for t in seen.tasks:
        out.print(f"\n[bold]{escape(t.id)}[/] {escape(t.title)}", highlight=False)
        if t.summary.strip():
            for line in t.summary.strip().splitlines():
                out.print(f"  {escape(redact(line))}", highlight=False)
        if not t.commit:
            out.print("  no commit", highlight=False)
            continue
        out.print(f"  against the base ({t.since[:10]}..{t.commit[:10]}):", highlight=False)
        out.print(escape(redact(t.diff_base if diff else _indent(t.stat_base))), highlight=False)
        if not t.stat_head:
            out.print("  against the head: its files are as on its branch", highlight=False)
        else:
            out.print(f"  against the head ({t.commit[:10]}..{seen.head[:10]}, its files):", highlight=False)
            out.print(escape(redact(t.diff_head if diff else _indent(t.stat_head))), highlight=False)
    out.print(f"\nkeep all: plait apply {seen.run_id}; leave some out: plait review {seen.run_id} --drop TASK")


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


def _print_drop(done: Reintegrated) -> None:
    for task_id, why in done.dropped.items():
        out.print(f"[yellow]dropped[/] {escape(task_id)}: {escape(why)}", highlight=False)
    for task_id in done.report.integrated:
        out.print(f"[green]integrated[/] {escape(task_id)}", highlight=False)
    for e in done.report.ejected:
        out.print(f"[red]ejected[/] {escape(e.task_id)}: {escape(e.reason)}", highlight=False)
    out.print(
        f"new result: {escape(done.branch)} @ {done.report.head[:10]}, {done.report.gate_runs} gate run(s); "
        "bring it in with plait apply",
        highlight=False,
    )
