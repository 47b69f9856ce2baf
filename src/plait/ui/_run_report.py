"""How `plait run`, `resume` and `demo` end: the last word, the tasks, where the result is, and the exit code."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from plait.errors import AgentFailed, ModelError
from plait.events.store import ObservedStore
from plait.run.one_agent import RunOutcome
from plait.run.parallel import ParallelOutcome
from plait.ui._common import err, out, provider_failure
from plait.ui._fmt import gate_line
from plait.ui._safe import escaped
from plait.ui.runview import RunView
from plait.ui.summary import summarize

__all__ = ["Outcome", "report_outcome"]

Outcome = RunOutcome | ParallelOutcome | None
"""What a run started from the command line ended with; None when the plan was not accepted."""


def report_outcome(outcome: Outcome, store: ObservedStore, as_json: bool) -> int:
    """Print how the run ended (JSON with `as_json`) and return its exit code; in a terminal, ring its bell."""
    if err.is_terminal:  # a run left to go on in another window says it ended
        err.bell()
    if outcome is None:
        err.print("the plan was not accepted: nothing more was spent")
        return 1
    events = store.inner.events(outcome.run_id)
    s = summarize(outcome.run_id, events)
    data: dict[str, Any] = {**s.as_json(), "status": outcome.status, "branch": outcome.branch}
    if isinstance(outcome, RunOutcome):
        data.update(
            summary=outcome.summary,
            files=outcome.files,
            commit=outcome.commit,
            steps=outcome.steps,
            base_commit=outcome.base.commit,
        )
    else:
        data["tasks"] = {
            t: {"status": r.status, "attempts": r.attempts, "reason": r.reason} for t, r in outcome.results.items()
        }
        data["commit"] = outcome.commit
    word, code = _verdict(outcome)
    failure = provider_failure(events) if code else ""
    if failure:  # nothing reached the model: the key or the model name is wrong, not the task
        err.print(f"[red]plait: error:[/] {escaped(failure)}", highlight=False, soft_wrap=True)
        code = ModelError.exit_code
    dropped = outcome.dropped if isinstance(outcome, ParallelOutcome) else {}
    if dropped:
        data.update(status=word, dropped=dropped)
    if as_json:
        out.print_json(json.dumps(data), ensure_ascii=True)  # a model's text stays in JSON escapes
        return code
    colour = "green" if word == "done" else "red"
    headline = ""
    if isinstance(outcome, RunOutcome):  # a failed run says why, even when its agent finished
        headline = outcome.summary or outcome.reason if outcome.status == "done" else outcome.reason or outcome.summary
    elif dropped:  # the tasks it went on without, each with why
        headline = "without " + "; ".join(
            f"{t} ({why.splitlines()[0] if why else 'dropped'})" for t, why in dropped.items()
        )
    out.print(f"[{colour} bold]{word}[/] run {outcome.run_id} {escaped(headline)}")
    if isinstance(outcome, ParallelOutcome):
        table = Table("task", "status", "attempts", "summary or reason")
        for task, result in outcome.results.items():
            note = outcome.summaries.get(task, "") if result.status == "done" else result.reason
            table.add_row(
                escaped(task), result.status, str(result.attempts), escaped(note.splitlines()[0]) if note else ""
            )
        out.print(table)
    if outcome.commit:
        what = "its work (not verified)" if isinstance(outcome, RunOutcome) and outcome.status != "done" else "result"
        out.print(f"  {what}: branch {outcome.branch} @ {outcome.commit[:10]}")
        out.print(f"  {gate_line(RunView.of(outcome.run_id, events))}")
    out.print(
        f"  {s.model_calls} model calls, {s.usage.input_tokens} tokens in ({s.usage.cached_tokens} cached), "
        f"{s.usage.output_tokens} out, {s.cost_text}"
    )
    out.print(f"  transcript: plait show {outcome.run_id}")
    if outcome.commit and word in ("done", "incomplete"):
        out.print(f"  next: plait review {outcome.run_id} (each task's work), then plait apply {outcome.run_id}")
    for note in s.notes():
        err.print(f"[yellow]note:[/] {escaped(note)}")
    return code


def _verdict(outcome: RunOutcome | ParallelOutcome) -> tuple[str, int]:
    """The run's last word and exit code: a run that went on without a task is not done, whatever it integrated."""
    if isinstance(outcome, ParallelOutcome) and outcome.dropped:
        return ("incomplete" if outcome.status == "done" else outcome.status), AgentFailed.exit_code
    return outcome.status, 0 if outcome.status == "done" else AgentFailed.exit_code
