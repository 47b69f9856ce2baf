"""`plait integrate BRANCH...` (the reconciler alone, on anyone's branches) and `plait apply RUN`."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plait.cli._options import RepoOpt, RunArg
from plait.errors import UsageError
from plait.events.runlog import RunLog
from plait.events.store import RedactingStore
from plait.events.types import Decision, RunFinished, RunStarted
from plait.reconcile.queue import MergeQueue, QueueReport, TaskBranch
from plait.run.base import new_run_id
from plait.run.review import make_gate, resolvers_for, through_the_gate
from plait.settings import Settings, load_settings
from plait.ui._common import err, open_store, out, resolve_run
from plait.ui._safe import escaped
from plait.ui.feed import make_redactor
from plait.workspace import GitError, Repo

if TYPE_CHECKING:
    from plait.reconcile.apply import Applied

__all__ = ["apply_run", "integrate"]

_INTENT_LIMIT = 4000
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _store(repo: Repo, *, create: bool, settings: Settings | None = None) -> RedactingStore:
    """The repository's event log; what is written to it is redacted first (the settings' keys too)."""
    return RedactingStore(open_store(repo, create=create), make_redactor(settings))


def _commit(repo: Repo, ref: str, what: str) -> str:
    try:
        return repo.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except GitError:
        raise UsageError(f"{what} '{ref}' is not a branch or commit of {repo.root}") from None


def _commits(repo: Repo, onto: str, branches: list[str]) -> tuple[str, list[str]]:
    """The commits of `onto` and of each branch, asked of git at once (one by one to say which is wrong)."""
    refs = [onto, *branches]
    found = []
    if not any(r.startswith("-") for r in refs):
        found = repo.git("rev-parse", *(f"{r}^{{commit}}" for r in refs), check=False).split()
    if len(found) != len(refs) or not all(_SHA.fullmatch(sha) for sha in found):
        found = [_commit(repo, onto, "--onto"), *(_commit(repo, b, "branch") for b in branches)]
    return found[0], found[1:]


def _task(repo: Repo, name: str, sha: str, base: str) -> TaskBranch:
    """A branch as a task: its commit messages since the base tell its intent."""
    log = repo.git("log", "--no-merges", "--format=%s%n%n%b", f"{base}..{sha}", check=False).strip()
    subject = log.splitlines()[0] if log else ""
    return TaskBranch(task_id=name, branch=name, commit=sha, instructions=log[:_INTENT_LIMIT], summary=subject)


def _outcomes(tasks: list[TaskBranch], report: QueueReport) -> list[dict[str, Any]]:
    ejected = {e.task_id: e for e in report.ejected}
    rows: list[dict[str, Any]] = []
    for task in tasks:
        row: dict[str, Any] = {"branch": task.branch, "commit": task.commit}
        if task.task_id in ejected:
            e = ejected[task.task_id]
            row.update(outcome="ejected", stage=e.stage, reason=e.reason, conflicts=list(e.conflicts), output=e.output)
        else:
            resolutions = report.resolutions.get(task.task_id, [])
            row.update(
                outcome="integrated",
                resolutions=[{"path": r.path, "rung": r.rung, "reason": r.reason} for r in resolutions],
            )
        rows.append(row)
    return rows


def integrate(
    branches: Annotated[list[str], typer.Argument(metavar="BRANCH...", help="Branches to integrate, in order.")],
    onto: Annotated[str, typer.Option("--onto", help="Where the integration branch starts.")] = "HEAD",
    no_llm: Annotated[bool, typer.Option("--no-llm", help="Only the rungs that need no model.")] = False,
    model: Annotated[str | None, typer.Option("--model", "-m", help="The model of the LLM rung.")] = None,
    verify: Annotated[str | None, typer.Option("--verify", help="The command that proves the result.")] = None,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="Skip the verify stage: the gate checks syntax and names only.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")] = False,
    repo_path: RepoOpt = Path(),
) -> None:
    """Merge BRANCHes onto a new, verified integration branch; your checkout is not touched.

    Exits with 1 when a branch had to be left out (ejected); the others are integrated all the same.
    With --no-verify no verify command runs (none is detected either): each merge is checked for syntax and
    cross-branch names only, and no gate worktree is checked out. The verify command runs in one worktree per
    repository (.git/plait/worktrees/_gate/integration), kept between runs and moved to each commit checked.
    """
    repo = Repo.discover(repo_path)
    settings = load_settings(repo.root, {"model": model, "verify_command": verify}).settings
    names = list(dict.fromkeys(branches))
    base, shas = _commits(repo, onto, names)
    tasks = [_task(repo, name, sha, base) for name, sha in zip(names, shas, strict=True)]
    run_id = f"integrate-{new_run_id()}"
    store = _store(repo, create=True, settings=settings)
    try:
        store.append(
            RunStarted(
                run_id=run_id,
                task="integrate " + " ".join(t.branch for t in tasks),
                repo=str(repo.root),
                base_commit=base,
                base_ref=onto,
                model="" if no_llm else settings.model,
            )
        )

        log = RunLog(store, run_id)
        gate = make_gate(repo, log, base, settings)
        gate.share_worktree()
        if no_verify:
            gate.verify_command, gate.detect = None, False  # no command, so no gate worktree is checked out
        queue = MergeQueue(repo, log, base, gate=gate, resolvers=resolvers_for(settings, no_llm, log, _warn))
        report = through_the_gate(queue, gate, tasks, _warn)
        status = "done" if not report.ejected else "failed"
        reason = f"{len(report.ejected)} of {len(tasks)} branch(es) ejected" if report.ejected else ""
        store.append(RunFinished(run_id=run_id, status=status, reason=reason, branch=queue.branch, commit=queue.head))
    finally:
        store.close()
    rows = _outcomes(tasks, report)
    if as_json:
        data = {"run_id": run_id, "branch": queue.branch, "base": base, "head": report.head}
        sys.stdout.write(json.dumps({**data, "gate_runs": report.gate_runs, "branches": rows}, indent=2) + "\n")
    else:
        _print(run_id, queue.branch, report, rows)
    raise typer.Exit(0 if not report.ejected else 1)


def _print(run_id: str, branch: str, report: QueueReport, rows: list[dict[str, Any]]) -> None:
    for row in rows:
        if row["outcome"] == "integrated":
            how = ", ".join(f"{r['path']} by {r['rung']}" for r in row["resolutions"]) or "merged cleanly"
            out.print(f"[green]integrated[/] {escaped(row['branch'])}: {escaped(how)}", highlight=False)
        else:
            out.print(f"[red]ejected[/] {escaped(row['branch'])}: {escaped(row['reason'])}", highlight=False)
    out.print(f"  {escaped(branch)} @ {report.head[:10]}, {report.gate_runs} gate run(s)", highlight=False)
    if report.ejected:
        again = f"  redo or rebase the ejected branches on {escaped(branch)}, then integrate them again"
        out.print(again, highlight=False)
    out.print(f"  the log: plait show {run_id}; bring it in: plait apply {run_id}", highlight=False)


def apply_run(
    run_ref: RunArg,
    squash: Annotated[bool, typer.Option("--squash", help="Land it as one commit, its message from the plan.")] = False,
    pick: Annotated[
        list[str] | None,
        typer.Option("--pick", metavar="TASK", help="Apply only this task's work (repeatable); integrates it again."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change; change nothing.")] = False,
    no_llm: Annotated[bool, typer.Option("--no-llm", help="With --pick: only the rungs that need no model.")] = False,
    repo_path: RepoOpt = Path(),
) -> None:
    """Bring a run's verified result into your current branch (fast-forward, else a merge commit; --squash: one
    commit). The commits made here are yours (git's user.name and user.email)."""
    from plait.cli._apply_parts import pick as pick_branches
    from plait.cli._apply_parts import picked_tasks, squash_message
    from plait.reconcile.apply import apply_commit, internal_commits
    from plait.run.results import has_result, result_branch
    from plait.ui._config_notes import config_notes
    from plait.ui._review import review_of

    repo = Repo.discover(repo_path)
    store = _store(repo, create=False)
    try:
        run_id = resolve_run(store, run_ref, acts_on=lambda r: has_result(RunLog(store, r)), what="run with a result")
        branch = result_branch(repo, RunLog(store, run_id))
        seen = review_of(repo, RunLog(store, run_id))
        if pick:
            chosen, why = picked_tasks(repo, seen, list(dict.fromkeys(pick)))
            for task_id, reason in why.items():
                out.print(f"picked {escaped(task_id)}: {escaped(reason)}", highlight=False)
            if dry_run:
                files = sorted({f for t in chosen for f in t.files})
                out.print(f"would integrate them again on a new branch, then apply; files: {', '.join(files)}")
                return
            branch, _ = pick_branches(repo, store, seen, chosen, no_llm, _warn)
            seen = review_of(repo, RunLog(store, run_id))
        target = _commit(repo, branch, "branch")
        internal = internal_commits(repo, repo.head(), target)
        if internal and not squash:
            _warn(f"the result's history holds {len(internal)} internal commit(s) of plait: landing it as one commit")
        message = squash_message(repo, seen, target) if squash or internal else None
        for note in config_notes(repo, RunLog(store, run_id), target):
            err.print(f"[yellow]note:[/] {note}", highlight=False)
        applied = asyncio.run(apply_commit(repo, target, what=f"plait run {run_id}", squash=message, dry_run=dry_run))
        if not dry_run:
            store.append(
                Decision(
                    run_id=run_id,
                    topic="apply",
                    decision=f"{applied.mode} of {repo.head_ref()} to {applied.commit[:12]}",
                    data={"branch": branch, "commit": applied.commit, "files": list(applied.files)},
                )
            )
    finally:
        store.close()
    _print_applied(run_id, repo.head_ref(), applied, dry_run)


def _warn(line: str) -> None:
    err.print(f"[yellow]note:[/] {escaped(line)}", highlight=False)


def _print_applied(run_id: str, head: str, applied: Applied, dry_run: bool) -> None:
    if applied.mode == "up-to-date":
        out.print(f"{head} already has run {run_id}: nothing to apply", highlight=False)
        return
    if dry_run:
        out.print(f"would apply run {run_id} to {head} by {applied.mode}; nothing changed", highlight=False)
        who = f" (by {escaped(applied.author)})" if applied.mode != "fast-forward" else ""
        out.print(f"commits{who}:", highlight=False)
        for line in applied.commits:
            out.print(f"  {escaped(line)}", highlight=False)
        out.print(f"files ({len(applied.files)}):", highlight=False)
        for path in applied.files:
            out.print(f"  {escaped(path)}", highlight=False)
        return
    by = f" by {escaped(applied.author)}" if applied.author else ""
    out.print(
        f"[green]applied[/] run {run_id} to {head}: {applied.mode} to {applied.commit[:10]}{by}, "
        f"{len(applied.files)} file(s) changed",
        highlight=False,
    )
