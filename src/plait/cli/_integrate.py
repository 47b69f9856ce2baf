"""The work of `plait integrate BRANCH...`, without typer: the fast start (`plait.cli._fast`) calls it when the
options are plain, the typer command (`plait.cli.cmd_integrate.integrate`) otherwise; both print the same."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from plait.errors import UsageError
from plait.events.runlog import RunLog
from plait.events.store import RedactingStore
from plait.events.types import RunFinished, RunStarted
from plait.reconcile.queue import MergeQueue, QueueReport, TaskBranch
from plait.run.base import new_run_id
from plait.run.review import make_gate, resolvers_for, through_the_gate
from plait.settings import Settings, load_settings
from plait.ui._common import err, open_store, out
from plait.ui._safe import escaped
from plait.ui.feed import make_redactor
from plait.workspace import GitError, Repo

__all__ = ["commit_of", "integrate_branches", "redacted_store", "warn"]

_INTENT_LIMIT = 4000
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def redacted_store(repo: Repo, *, create: bool, settings: Settings | None = None) -> RedactingStore:
    """The repository's event log; what is written to it is redacted first (the settings' keys too)."""
    return RedactingStore(open_store(repo, create=create), make_redactor(settings))


def commit_of(repo: Repo, ref: str, what: str) -> str:
    """The commit `ref` names; a usage error saying it is not one of the repository's (`what` it was given as)."""
    try:
        return repo.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except GitError:
        raise UsageError(f"{what} '{ref}' is not a branch or commit of {repo.root}") from None


def warn(line: str) -> None:
    """Say `line` on stderr as a note."""
    err.print(f"[yellow]note:[/] {escaped(line)}", highlight=False)


def _commits(repo: Repo, onto: str, branches: list[str]) -> tuple[str, list[str]]:
    """The commits of `onto` and of each branch, asked of git at once (one by one to say which is wrong)."""
    refs = [onto, *branches]
    found = []
    if not any(r.startswith("-") for r in refs):
        found = repo.git("rev-parse", *(f"{r}^{{commit}}" for r in refs), check=False).split()
    if len(found) != len(refs) or not all(_SHA.fullmatch(sha) for sha in found):
        found = [commit_of(repo, onto, "--onto"), *(commit_of(repo, b, "branch") for b in branches)]
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


def integrate_branches(
    branches: list[str],
    onto: str = "HEAD",
    no_llm: bool = False,
    model: str | None = None,
    verify: str | None = None,
    no_verify: bool = False,
    as_json: bool = False,
    repo_path: Path = Path(),
) -> int:
    """Merge `branches` onto a new, verified integration branch started at `onto`, print what became of each and
    return the exit code: 1 when a branch was ejected, else 0."""
    repo = Repo.discover(repo_path)
    settings = load_settings(repo.root, {"model": model, "verify_command": verify}).settings
    names = list(dict.fromkeys(branches))
    base, shas = _commits(repo, onto, names)
    tasks = [_task(repo, name, sha, base) for name, sha in zip(names, shas, strict=True)]
    run_id = f"integrate-{new_run_id()}"
    store = redacted_store(repo, create=True, settings=settings)
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
        queue = MergeQueue(repo, log, base, gate=gate, resolvers=resolvers_for(settings, no_llm, log, warn))
        report = through_the_gate(queue, gate, tasks, warn)
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
    return 0 if not report.ejected else 1


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
