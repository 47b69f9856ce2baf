"""`plait integrate BRANCH...` (the reconciler alone, on anyone's branches) and `plait apply RUN`.

Integrate's work is `plait.cli._integrate`'s, which the fast start calls without typer when the options are plain.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.cli._integrate import commit_of, integrate_branches, redacted_store, warn
from plait.cli._options import RepoOpt, RunArg
from plait.events.runlog import RunLog
from plait.events.types import Decision
from plait.ui._common import err, out, resolve_run
from plait.ui._safe import escaped
from plait.workspace import Repo

if TYPE_CHECKING:
    from plait.reconcile.apply import Applied

__all__ = ["apply_run", "integrate"]


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
    code = integrate_branches(branches, onto, no_llm, model, verify, no_verify, as_json, repo_path)
    raise typer.Exit(code)


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
    store = redacted_store(repo, create=False)
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
            branch, _ = pick_branches(repo, store, seen, chosen, no_llm, warn)
            seen = review_of(repo, RunLog(store, run_id))
        target = commit_of(repo, branch, "branch")
        internal = internal_commits(repo, repo.head(), target)
        if internal and not squash:
            warn(f"the result's history holds {len(internal)} internal commit(s) of plait: landing it as one commit")
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
