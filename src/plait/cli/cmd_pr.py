"""`plait pr RUN`: push a run's verified result to a remote and open a pull request for it."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from plait.cli._options import JsonOpt, RepoOpt, RunArg
from plait.cli._pushing import base_branch, push, push_args, remote_for, remote_url, result_of, squash
from plait.errors import EnvironmentProblem
from plait.events.runlog import RunLog
from plait.events.store import EventStore, RedactingStore
from plait.events.types import Decision
from plait.run.results import has_result
from plait.settings import load_settings
from plait.ui._common import open_store, out, resolve_run
from plait.ui._landing import Landing, compare_url, landing_of
from plait.ui._safe import escaped
from plait.ui.feed import make_redactor
from plait.ui.runview import RunView
from plait.workspace import Repo

__all__ = ["pr"]


@dataclass
class Opened:
    """What `plait pr` did, or (with --dry-run) would do."""

    run_id: str
    remote: str
    branch: str
    base: str
    commit: str
    squashed: bool
    title: str
    body: str
    url: str = ""
    """The pull request, or the page that compares the branch with its base; empty when neither is known."""
    tool: str = ""
    """`gh` when it opened the pull request."""
    pushed: bool = False
    commands: list[str] = field(default_factory=list)


class PrToolFailed(EnvironmentProblem):
    """The pull request tool (`gh`) failed; the message is its last word."""


def _gh_args(opened: Opened, body_file: str, draft: bool) -> list[str]:
    args = ["gh", "pr", "create", "--base", opened.base, "--head", opened.branch]
    args += ["--title", opened.title, "--body-file", body_file]
    return [*args, "--draft"] if draft else args


def _open_with_gh(gh: str, repo: Repo, opened: Opened, draft: bool) -> str:
    """Run `gh pr create` with the body in a file; the URL it prints, or `PrToolFailed` with its last line."""
    with tempfile.TemporaryDirectory(prefix="plait-pr-") as tmp:
        body_file = Path(tmp) / "body.md"
        body_file.write_text(opened.body, encoding="utf-8")
        args = _gh_args(opened, str(body_file), draft)
        try:
            done = subprocess.run([gh, *args[1:]], cwd=repo.root, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise PrToolFailed(f"gh pr create could not start: {exc}") from exc
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit status {done.returncode}"
        raise PrToolFailed(f"gh pr create failed: {last} (the branch {opened.branch} is pushed to {opened.remote})")
    urls = [word for word in done.stdout.split() if word.startswith(("https://", "http://"))]
    return urls[-1] if urls else done.stdout.strip()


def _record(repo: Repo, store: EventStore, opened: Opened) -> None:
    """Log where the result went: a `Decision` of topic `pr`, redacted like every event."""
    logged = RedactingStore(store, make_redactor(load_settings(repo.root, report=None).settings))
    what = f"pull request {opened.url}" if opened.tool else f"pushed {opened.branch} to {opened.remote}"
    logged.append(
        Decision(
            run_id=opened.run_id,
            topic="pr",
            decision=what,
            data={k: v for k, v in asdict(opened).items() if k not in ("body", "commands")},
        )
    )


def pr(
    run_ref: RunArg,
    remote: Annotated[
        str | None, typer.Option("--remote", help="Where to push (default: the branch's upstream, else origin).")
    ] = None,
    branch: Annotated[str | None, typer.Option("--branch", help="The remote branch (default: plait/RUN).")] = None,
    base: Annotated[
        str | None, typer.Option("--base", help="The branch to merge into (default: the one the run started from).")
    ] = None,
    squash_it: Annotated[
        bool, typer.Option("--squash", help="Push one commit on the run's base, authored by you.")
    ] = False,
    draft: Annotated[bool, typer.Option("--draft", help="Open the pull request as a draft.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the body and the commands; push nothing.")] = False,
    as_json: JsonOpt = False,
    repo_path: RepoOpt = Path(),
) -> None:
    """Push a run's verified result and open a pull request for it (with `gh`, else print where to open one).

    The body tells the plan, each task's summary, how each file was merged and what the gate ran.
    """
    repo = Repo.discover(repo_path)
    store = open_store(repo, create=False)
    try:
        run_id = resolve_run(store, run_ref, acts_on=lambda r: has_result(RunLog(store, r)), what="run with a result")
        _, commit = result_of(repo, RunLog(store, run_id))
        events = store.events(run_id)
        view = RunView.of(run_id, events)
        landing = landing_of(view, events)
        into = base_branch(repo, view.base_ref, base)
        where = remote_for(repo, remote, into)
        opened = Opened(
            run_id=run_id,
            remote=where,
            branch=branch or f"plait/{run_id}",
            base=into,
            commit=commit,
            squashed=squash_it,
            title=landing.title,
            body=landing.body,
        )
        _land(repo, store, opened, landing, view, draft=draft, dry_run=dry_run)
    finally:
        store.close()
    if as_json:
        sys.stdout.write(json.dumps(asdict(opened), indent=2) + "\n")
    else:
        _print(opened, dry_run)


def _land(
    repo: Repo, store: EventStore, opened: Opened, landing: Landing, view: RunView, *, draft: bool, dry_run: bool
) -> None:
    """Squash (when asked), push, and open the pull request; with `dry_run`, only say how."""
    if opened.squashed:
        when = view.ended or view.last_ts
        opened.commit = squash(repo, commit=opened.commit, base=view.base_commit, message=landing.message, when=when)
    gh = shutil.which("gh")
    opened.commands = [shlex.join(["git", *push_args(opened.remote, opened.commit, opened.branch)])]
    if gh:
        opened.commands.append(shlex.join(_gh_args(opened, "BODY.md", draft)))
    if dry_run:
        opened.url = compare_url(remote_url(repo, opened.remote), opened.base, opened.branch) or ""
        return
    push(repo, opened.remote, opened.commit, opened.branch)
    opened.pushed = True
    if gh:
        opened.url, opened.tool = _open_with_gh(gh, repo, opened, draft), "gh"
    else:
        opened.url = compare_url(remote_url(repo, opened.remote), opened.base, opened.branch) or ""
    _record(repo, store, opened)


def _print(opened: Opened, dry_run: bool) -> None:
    said = escaped
    if dry_run:
        out.print(f"[bold]{said(opened.title)}[/]\n", highlight=False)
        out.print(said(opened.body), highlight=False)
        out.print("would run:", highlight=False)
        for command in opened.commands:
            out.print(f"  {said(command)}", highlight=False)
        if len(opened.commands) == 1:
            then = f"then open {opened.url}" if opened.url else "then open a pull request (no PR tool was found)"
            out.print(f"  {said(then)}", highlight=False)
        return
    kind = "squashed " if opened.squashed else ""
    pushed = f"pushed {kind}run {opened.run_id} to {opened.remote} as {opened.branch} ({opened.commit[:10]})"
    out.print(f"[green]{said(pushed)}[/]", highlight=False)
    if opened.tool:
        out.print(f"pull request: {said(opened.url)}", highlight=False)
    elif opened.url:
        out.print(f"open the pull request: {said(opened.url)}", highlight=False)
    else:
        out.print(
            f"no PR tool was found (install gh to open one from here): open a pull request of {said(opened.branch)} "
            f"into {said(opened.base)} on {said(opened.remote)}",
            highlight=False,
        )
