"""Plain progress lines, one per step, for a terminal that is not interactive (and for `--no-tui`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from plait.events.types import (
    AgentStopped,
    Committed,
    Decision,
    Event,
    GateChecked,
    Integrated,
    MergeStep,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.reconcile.verdict import gate_why
from plait.ui._safe import safe_event

__all__ = ["ProgressPrinter", "short_args"]


def short_args(arguments: dict[str, object] | None, raw: str = "", width: int = 90) -> str:
    """Tool arguments on one line, long values shortened."""
    if arguments is None:
        return f"<malformed JSON: {raw[:40]!r}>"
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        parts.append(f"{key}={text[:40] + '…' if len(text) > 40 else text}")
    line = " ".join(parts)
    return line if len(line) <= width else line[: width - 1] + "…"


def _first(text: str, width: int = 120) -> str:
    lines = text.strip().splitlines()
    return escape(lines[0][:width]) if lines else ""


def _files(files: list[str], shown: int = 4) -> str:
    more = f" and {len(files) - shown} more" if len(files) > shown else ""
    return escape(", ".join(files[:shown]) + more)


class ProgressPrinter:
    """An event listener that prints what each agent does as it happens (as the log has it, made visible).

    `max_attempts` (else the run's own setting, from its start) says whether a rejected task is tried again.
    """

    def __init__(self, console: Console, max_attempts: int | None = None) -> None:
        self.console = console
        self.max_attempts = max_attempts
        self.attempts: dict[str, int] = {}
        self._lines: dict[type[Any], Callable[[Any, str], str | None]] = {
            RunStarted: self._run_started,
            TaskStarted: self._task_started,
            ModelCallFinished: self._model_call,
            ModelCallRetried: lambda e, who: (
                f"{who} [yellow]model call failed ({escape(e.reason)}); retry {e.attempt} in {e.wait_s:.1f}s[/]"
            ),
            ModelCallFailed: lambda e, who: f"{who} [red]model call failed: {escape(e.error)}[/]",
            ToolCalled: lambda e, who: (
                f"{who}   [bold]{escape(e.call.name)}[/] {escape(short_args(e.call.arguments, e.call.raw_arguments))}"
            ),
            ToolReturned: self._tool_returned,
            AgentStopped: self._agent_stopped,
            Committed: lambda e, who: f"{who} committed {e.sha[:10]} on {escape(e.branch)} ({len(e.files)} files)",
            MergeStep: self._merge_step,
            GateChecked: self._gate,
            Integrated: self._integrated,
            TaskFinished: self._task_finished,
            Decision: self._decision,
            RunFinished: self._run_finished,
        }

    def __call__(self, event: Event) -> None:
        line = self._lines.get(type(event))
        if line is None:
            return
        event = safe_event(event)
        text = line(event, f"[cyan]{escape(event.agent)}[/]" if event.agent else "[cyan]run[/]")
        if text is not None:
            self.console.print(text, soft_wrap=True)  # one event, one line, however long

    def _run_started(self, event: RunStarted, who: str) -> None:
        if self.max_attempts is None:
            setting = event.settings.get("max_attempts")
            self.max_attempts = setting if isinstance(setting, int) else None

    def _task_started(self, event: TaskStarted, who: str) -> str:
        self.attempts[event.agent] = event.attempt
        again = f"attempt {event.attempt}{self._of()} " if event.attempt > 1 else ""
        return f"{who} started {again}on branch [bold]{escape(event.branch)}[/]"

    def _of(self) -> str:
        return f" of {self.max_attempts}" if self.max_attempts else ""

    def _model_call(self, event: ModelCallFinished, who: str) -> str:
        usage = event.response.usage
        cost = f" ${event.cost_usd:.4f}" if event.cost_usd else ""
        thought = _first(event.response.text, 10_000)
        return f"{who} [dim]#{event.call} {usage.input_tokens}→{usage.output_tokens} tok{cost}[/] {thought}"

    def _tool_returned(self, event: ToolReturned, who: str) -> str | None:
        output = event.output.strip()
        if event.is_error:
            return f"{who}   [red]✗ {_first(output)}[/]"
        if event.name != "run":
            return None
        last = output.splitlines()[-1] if output else ""
        return f"{who}   [dim]{_first(output, 10_000)} … {escape(last[:100])}[/]"

    def _agent_stopped(self, event: AgentStopped, who: str) -> str:
        colour = "green" if event.reason == "finished" else "red"
        return f"{who} [{colour}]stopped: {event.reason}[/] after {event.steps} model calls, ${event.cost_usd:.4f}"

    def _merge_step(self, event: MergeStep, who: str) -> str | None:
        """How a branch merged: git alone, or which rung resolved which file; an ejection is said by `Integrated`."""
        task = f"[cyan]{escape(event.task)}[/]"
        if event.rung == "redo":
            return None
        if event.rung == "git" and event.outcome == "clean":
            return f"{task} merged by git, no conflict"
        if event.rung == "git":
            return f"{task} [yellow]conflicts in {_files(event.files)}[/]: the merge ladder takes them"
        if event.outcome == "resolved":
            return f"{task} merged: {_files(event.files)} resolved by the {event.rung} rung"
        return f"{task} [red]the {event.rung} rung failed on {_files(event.files)}[/]: {_first(event.detail)}"

    def _gate(self, event: GateChecked, who: str) -> str | None:
        """The gate's verdict on a task's work: a stage that failed, or the last one passed (not the base's)."""
        if not event.tasks or (event.passed and event.stage != "verify"):
            return None
        tasks = escape(", ".join(event.tasks))
        why = escape(gate_why(event.stage, event.output, passed=event.passed))
        if event.passed:
            return f"[cyan]gate[/] [green]passed[/] {tasks} @ {event.commit[:10]}" + (f": {why}" if why else "")
        return f"[cyan]gate[/] [red]failed[/] {tasks} @ {event.commit[:10]}: the {event.stage} check: {why}"

    def _integrated(self, event: Integrated, who: str) -> str | None:
        if event.tasks:
            into = f"{escape(event.branch)} @ {event.commit[:10]}"
            return f"[cyan]{escape(', '.join(event.tasks))}[/] [green]integrated[/]: {into}"
        lines = []
        for task in event.ejected:
            attempt = self.attempts.get(task, 1)
            if self.max_attempts is not None and attempt >= self.max_attempts:
                then = f"no attempt left ({attempt}{self._of()}): it is dropped"
            else:
                then = f"retry {attempt + 1}{self._of()} follows, told why"
            lines.append(f"[cyan]{escape(task)}[/] [red]rejected[/]: {_first(event.reason, 200)}; {then}")
        return "\n".join(lines) or None

    def _task_finished(self, event: TaskFinished, who: str) -> str | None:
        if event.status != "dropped":
            return None
        return f"{who} [red]dropped[/]: {_first(event.reason, 200)}"

    def _decision(self, event: Decision, who: str) -> str | None:
        if event.topic == "worktree":
            return None  # an attempt's worktree about to be made: the start line that follows says it
        if event.topic == "notes" or (event.topic == "verify" and event.data.get("state") == "cannot-run"):
            return None  # a verify command that cannot run stops the run with this line as its error
        if event.topic == "mode" and event.reason:  # why the plan runs as one agent: the estimate's figures
            return f"{who} [yellow]{escape(event.decision)}[/]: {_first(event.reason, 300)}"
        return f"{who} [yellow]{escape(event.decision)}[/]"

    def _run_finished(self, event: RunFinished, who: str) -> str:
        colour = {"done": "green", "incomplete": "yellow"}.get(event.status, "red")
        return f"{who} [{colour}]{event.status}[/] {escape(event.reason)}"
