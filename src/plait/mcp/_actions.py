"""What an MCP client may set going: a run, an investigation, an integration, an apply.

Each is the `plait` command itself, started with an argv list (never a shell) in the repository; a run and an
investigation go on in the background, detached, and the client follows them by their run id.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any, Literal

from plait.errors import UsageError
from plait.events.runlog import RunLog
from plait.mcp import _checks
from plait.mcp._desk import Desk
from plait.mcp._launch import Finder, either, failure, lease_holder
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.run.results import has_result, result_branch
from plait.ui._common import resolve_run
from plait.ui.summary import summarize

__all__ = ["Actions"]

Mode = Literal["single", "parallel"]


class Actions:
    """The commands a client starts in `desk`'s repository."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.repo = desk.repo

    def _common(self, model: str | None) -> list[str]:
        spec = _checks.model_spec(self.repo.root, model, self.desk.settings.model)
        return ["--json", "--repo", str(self.repo.root), *(["--model", spec] if spec else [])]

    def start_run(self, task: str, mode: Mode | None, plan_file: str | None, model: str | None) -> dict[str, Any]:
        _checks.text(task, "task")
        args = ["run", "-", "--yes", "--no-tui", *self._common(model)]
        if mode == "single":
            args.append("--single")
        if plan_file:
            args += ["--plan", str(_checks.inside(self.repo.root, plan_file, "the plan file"))]
        run_id = self.desk.launcher.start(args, task, either(lease_holder(self.desk.db), self._new_run("", task)))
        return {"run_id": run_id, "status": "running", "follow": "run_status, run_events"}

    def ask(self, question: str, model: str | None, follow_up: str | None, wait_s: float) -> dict[str, Any]:
        _checks.text(question, "question")
        args = ["ask", "-", *self._common(model)]
        if follow_up:
            with self.desk.store() as store:
                args += ["--follow-up", resolve_run(store, follow_up)]
        find = (
            lease_holder(self.desk.db) if follow_up else either(lease_holder(self.desk.db), self._new_run("", question))
        )
        run_id = self.desk.launcher.start(args, question, find)
        return self._finished_or_running(run_id, wait_s)

    def integrate(
        self, branches: list[str], onto: str, no_llm: bool, model: str | None, wait_s: float
    ) -> dict[str, Any]:
        names = list(dict.fromkeys(_checks.ref_name(b, "branch") for b in branches))
        if not names:
            raise UsageError("name at least one branch to integrate")
        args = ["integrate", f"--onto={_checks.ref_name(onto, 'onto')}", *self._common(model)]
        if no_llm:
            args.append("--no-llm")
        find = self._new_run("integrate-", "integrate " + " ".join(names))
        run_id = self.desk.launcher.start([*args, "--", *names], "", find)
        return self._finished_or_running(run_id, wait_s)

    def _new_run(self, prefix: str, task: str) -> Finder:
        """A run of `task` that was not in the log when the command started: how a command that holds no lease
        (`plait integrate`), or whose lease is not in the SQLite log, is found."""
        known = set(self.desk.started(set()))
        tasks = {task, self.desk.redact(task)}

        def find(_pid: int) -> str | None:
            runs = self.desk.started(known)
            return next((r for r, t in runs.items() if r.startswith(prefix) and t in tasks), None)

        return find

    def _finished_or_running(self, run_id: str, wait_s: float) -> dict[str, Any]:
        self.desk.launcher.wait(run_id, min(max(wait_s, 0.0), 600.0))
        done = self.desk.launcher.result(run_id)
        state = "running" if self.desk.launcher.running(run_id) else "ended"
        return {"run_id": run_id, "status": state, **done}

    def apply(self, ref: str, dry_run: bool) -> dict[str, Any]:
        """`plait apply RUN`; with `dry_run`, what it would do (mode, files, what is in the way), touching nothing."""
        with self.desk.store() as store:
            run_id = resolve_run(store, ref, acts_on=lambda r: has_result(RunLog(store, r)), what="run with a result")
            events = store.events(run_id)
            branch = result_branch(self.repo, RunLog(store, run_id))
        if not dry_run:
            return self._apply(run_id)
        target = self.repo.git("rev-parse", f"refs/heads/{branch}").strip()
        head, into = self.repo.head(), self.repo.head_ref()
        plan: dict[str, Any] = {"run_id": run_id, "dry_run": True, "branch": branch, "commit": target, "into": into}
        if into == "HEAD":
            return plan | {"mode": "refused", "reason": "HEAD is detached: check out the branch to apply to"}
        if self.repo.is_ancestor(target, head):
            return plan | {"mode": "up-to-date", "files": []}
        result, mode = target, "fast-forward"
        if not self.repo.is_ancestor(head, target):
            merged = asyncio.run(
                merge_commits(self.repo, head, target, resolvers=default_resolvers(), message="dry run")
            )
            if merged.commit is None:
                paths = [c.path for c in merged.unresolved]
                return plan | {"mode": "refused", "reason": f"conflicts with {into}", "conflicts": paths}
            result, mode = merged.commit, "merge"
        files = self.repo.git("diff", "--name-only", "--no-renames", head, result).split()
        dirty = sorted(set(files) & set(self.repo.dirty_paths()))
        plan |= {"mode": mode, "files": files, "notes": summarize(run_id, events).notes()}
        if dirty:
            plan |= {"mode": "refused", "reason": "uncommitted changes would be overwritten", "conflicts": dirty}
        return plan

    def _apply(self, run_id: str) -> dict[str, Any]:
        """`plait apply RUN`, the command itself: what it checks, logs and says stays in one place."""
        argv = [sys.executable, "-m", "plait", "apply", run_id, "--repo", str(self.repo.root)]
        done = subprocess.run(
            argv, cwd=self.repo.root, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600
        )
        if done.returncode != 0:
            raise failure(done.returncode, done.stderr, "plait apply")
        notes = [line.removeprefix("note: ") for line in done.stderr.splitlines() if line.startswith("note: ")]
        said = done.stdout.strip()
        return {"run_id": run_id, "dry_run": False, "applied": said, "head": self.repo.head(), "notes": notes}
