"""One repository's runs as an MCP client reads them: lists, status, events, diffs and reports.

Every value handed out passes `Desk.safe` (secrets redacted, control characters made visible, as
`plait.ui.feed.redact_event` does for events); errors are plait's own one-line `PlaitError`s.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from plait.errors import EnvironmentProblem, StateError, UsageError
from plait.events.types import Committed, Event, RunStarted, TaskFinished, TaskStarted
from plait.mcp._launch import Launcher, leased
from plait.reconcile.queue import integration_branch
from plait.redact import scrub_strings
from plait.settings import load_settings
from plait.textsafe import visible
from plait.ui._common import open_store, resolve_run
from plait.ui.feed import make_redactor, redact_event
from plait.ui.overview import print_run_summary
from plait.ui.report import render_html
from plait.ui.runview import AgentView, RunView
from plait.ui.summary import summarize
from plait.workspace import Repo

__all__ = ["Desk"]

_GIT_DIFF = ("diff", "--no-color", "--no-ext-diff", "--no-textconv")


def _clip(value: Any, limit: int) -> Any:
    def cut(text: str) -> str:
        return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters]"

    return scrub_strings(value, cut)


def _agent(a: AgentView) -> dict[str, Any]:
    return {
        "id": a.id,
        "title": a.title,
        "state": a.state,
        "attempt": a.attempt,
        "branch": a.branch,
        "merge": a.merge,
        "now": a.now,
        "summary": a.summary,
        "reason": a.reason,
        "steps": a.steps,
        "tool_calls": a.tool_calls,
        "cost_usd": round(a.cost_usd, 6),
    }


class Desk:
    """The runs of `repo`, read from its event log for a client; `launcher` starts commands in it."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.settings = load_settings(repo.root).settings
        self.redact = make_redactor(self.settings)
        self.launcher = Launcher(repo)

    def safe(self, value: Any) -> Any:
        """`value` (JSON-like) with every string redacted and its control characters made visible."""
        return scrub_strings(value, lambda text: visible(self.redact(text)))

    @property
    def db(self) -> Path:
        """The SQLite log, where the leases of runs of this machine are kept."""
        return self.repo.common_dir / "plait" / "events.db"

    @contextmanager
    def store(self) -> Iterator[Any]:
        """The repository's event log (`open_store`'s: SQLite by default, or the configured server store)."""
        store = open_store(self.repo, create=False)
        try:
            yield store
        finally:
            store.close()

    def _read(self, ref: str) -> tuple[str, list[Event], bool]:
        """The run `ref` names (an id, a unique prefix, `last`), its events redacted, and whether it is live."""
        with self.store() as store:
            run_id = resolve_run(store, ref)
            events = [redact_event(e, self.redact) for e in store.events(run_id)]
            live = self.launcher.running(run_id) or leased(self.db, run_id)
        return run_id, events, live

    def started(self, known: set[str]) -> dict[str, str]:
        """The runs in the log besides `known`, each with its task as the log keeps it (redacted)."""
        try:
            store = open_store(self.repo, create=False)
        except EnvironmentProblem:  # no log yet
            return {}
        try:
            fresh = [run_id for run_id in store.run_ids() if run_id not in known]
            begun = {run_id: store.events(run_id, kinds=["run_started"])[:1] for run_id in fresh}
        finally:
            store.close()
        return {run_id: e[0].task for run_id, e in begun.items() if e and isinstance(e[0], RunStarted)}

    def list_runs(self) -> list[dict[str, Any]]:
        try:
            store = open_store(self.repo, create=False)
        except EnvironmentProblem:  # no log yet: no runs
            return []
        try:
            summaries = [summarize(run_id, store.events(run_id)) for run_id in store.run_ids()]
        finally:
            store.close()
        rows = []
        for s in summaries:
            task = s.task.strip().splitlines()[0][:200] if s.task.strip() else ""
            rows.append(
                {
                    "run_id": s.run_id,
                    "status": s.status,
                    "task": task,
                    "model": s.model,
                    "started": s.started,
                    "duration_s": s.duration_s,
                    "model_calls": s.model_calls,
                    "cost_usd": round(s.cost_usd, 6),
                    "branch": s.branch,
                }
            )
        return rows

    def status(self, ref: str, wait_s: float = 0.0) -> dict[str, Any]:
        """The run's state; with `wait_s`, once no process works on it any more, or when that time is up."""
        deadline = time.monotonic() + wait_s
        while True:
            data = self._status(ref)
            if (not data["live"] and not self._ending(data)) or time.monotonic() >= deadline:
                return data
            time.sleep(0.2)

    def _ending(self, data: dict[str, Any]) -> bool:
        """Whether a run that ended in its log is still having its last words (its --json) written by its process,
        which lets go of the run a moment before it prints them."""
        return data["status"] != "running" and "result" not in data and self.launcher.printing(data["run_id"])

    def _status(self, ref: str) -> dict[str, Any]:
        run_id, events, live = self._read(ref)
        s, view = summarize(run_id, events), RunView.of(run_id, events)
        gates = [
            g.model_dump(mode="json", include={"commit", "stage", "passed", "tasks", "duration_s"})
            | ({} if g.passed else {"output": g.output[-2000:]})
            for g in view.gates
        ]
        notes = s.notes()
        if s.status == "running" and not live:
            notes.append("no process works on this run now: it was stopped, or its process died")
        return s.as_json() | {
            "live": live,
            "plan": view.plan,
            "agents": [_agent(a) for a in view.agents.values()],
            "merges": [m.model_dump(mode="json", exclude={"v", "run_id", "agent", "seq"}) for m in view.merges],
            "gate": gates,
            "integrations": [
                i.model_dump(mode="json", exclude={"v", "run_id", "agent", "seq"}) for i in view.integrations
            ],
            "notes": notes,
            **self.launcher.result(run_id),
        }

    def events(self, ref: str, *, after: int, limit: int, agent: str | None, max_chars: int) -> dict[str, Any]:
        with self.store() as store:
            run_id = resolve_run(store, ref)
            fresh = store.events(run_id, agent=agent, after=after)
            ends = store.events(run_id, kinds=["run_started", "run_finished"])
        page = fresh[:limit]
        return {
            "run_id": run_id,
            "events": [_clip(redact_event(e, self.redact).model_dump(mode="json"), max_chars) for e in page],
            "next_after": page[-1].seq if page else after,
            "more": len(fresh) > len(page),
            "run_finished": bool(ends) and ends[-1].kind == "run_finished",
        }

    def diff(self, ref: str, task: str | None, *, max_chars: int) -> dict[str, Any]:
        run_id, events, _ = self._read(ref)
        base, head = self._task_span(run_id, events, task) if task else self._result_span(run_id, events)
        stat = self.repo.git(*_GIT_DIFF, "--stat", base, head) if head else ""
        patch = self.repo.git(*_GIT_DIFF, "--patch", base, head) if head else ""
        return {
            "run_id": run_id,
            "task": task,
            "base": base,
            "commit": head,
            "stat": stat,
            "diff": patch[:max_chars],
            "truncated": len(patch) > max_chars,
        }

    def _result_span(self, run_id: str, events: list[Event]) -> tuple[str, str]:
        view = RunView.of(run_id, events)
        head = view.commit
        if not head and self.repo.branch_exists(integration_branch(run_id)):
            head = self.repo.git("rev-parse", f"refs/heads/{integration_branch(run_id)}").strip()
        if not view.base_commit or not head:
            raise StateError(f"run {run_id} has no result yet: ask for one task's diff, or wait until it ends")
        return view.base_commit, head

    def _task_span(self, run_id: str, events: list[Event], task: str) -> tuple[str, str]:
        starts = [e for e in events if isinstance(e, TaskStarted)]
        mine = [e for e in starts if e.agent == task]
        if not mine:
            names = ", ".join(dict.fromkeys(e.agent for e in starts)) or "none yet"
            raise UsageError(f"run {run_id} has no task '{task}': its tasks are {names}")
        last = mine[-1]
        if self.repo.branch_exists(last.branch):
            return last.base_commit, self.repo.git("rev-parse", f"refs/heads/{last.branch}").strip()
        made = [
            e.commit if isinstance(e, TaskFinished) else e.sha
            for e in events
            if e.agent == task and e.seq > last.seq and isinstance(e, TaskFinished | Committed)
        ]
        return last.base_commit, next((c for c in reversed(made) if c), "")

    def report_text(self, ref: str) -> str:
        _, events, _ = self._read(ref)
        page = io.StringIO()
        print_run_summary(Console(file=page, width=120, color_system=None, highlight=False), events)
        return str(self.safe(page.getvalue()))

    def report_html(self, ref: str) -> str:
        run_id, events, _ = self._read(ref)
        view = RunView.of(run_id, events)
        stat = ""
        if view.base_commit and view.commit:
            stat = self.repo.git(*_GIT_DIFF, "--stat", view.base_commit, view.commit, check=False)
        return str(self.safe(render_html(events, diffstat=stat, redact=self.redact)))
