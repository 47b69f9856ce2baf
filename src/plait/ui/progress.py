"""Plain progress lines, one per step, for a terminal that is not interactive (and for `--no-tui`)."""

from __future__ import annotations

import dataclasses

from rich.console import Console

from plait.events.types import (
    AgentStopped,
    Committed,
    Decided,
    Event,
    GateChecked,
    Integrated,
    MergeStep,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    NotesDelivered,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
    VerifyChecked,
    WorktreeOpening,
)
from plait.ui._describe import Said, describe, short_args
from plait.ui._safe import safe_event

__all__ = ["ProgressPrinter", "short_args"]

_SHOWN = (
    TaskStarted,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallFailed,
    ToolCalled,
    ToolReturned,
    AgentStopped,
    Committed,
    MergeStep,
    GateChecked,
    Integrated,
    TaskFinished,
    Decided,
    RunFinished,
)
"""The events that make a line; their words are `describe`'s."""


class ProgressPrinter:
    """An event listener that prints what each agent does as it happens (as the log has it, made visible).

    `max_attempts` (else the run's own setting, from its start) says whether a rejected task is tried again.
    """

    def __init__(self, console: Console, max_attempts: int | None = None) -> None:
        self.console = console
        self.max_attempts = max_attempts
        self.attempts: dict[str, int] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted) and self.max_attempts is None:
            setting = event.settings.get("max_attempts")
            self.max_attempts = setting if isinstance(setting, int) else None
        if isinstance(event, TaskStarted):
            self.attempts[event.agent] = event.attempt
        if not isinstance(event, _SHOWN) or not self._shown(event):
            return
        event = safe_event(event)
        said = describe(event, max_attempts=self.max_attempts)
        if said is None:
            return
        text = self._ejections(event, said) if isinstance(event, Integrated) and not event.tasks else said.markup()
        self.console.print(text, soft_wrap=True)  # one event, one line, however long

    def _shown(self, event: Event) -> bool:
        """Whether the event is worth a line: not bookkeeping, and not what another line says already."""
        if isinstance(event, ToolReturned):
            return event.is_error or event.name == "run"  # a command's output; other tools' results are plain
        if isinstance(event, MergeStep):
            return event.rung != "redo"  # a redo's ejection is said by `Integrated`
        if isinstance(event, GateChecked):  # a stage that failed, or the last one passed (not the base's)
            return bool(event.tasks) and (not event.passed or event.stage == "verify")
        if isinstance(event, TaskFinished):
            return event.status == "dropped"
        if isinstance(event, Integrated):
            return bool(event.tasks or event.ejected)
        if isinstance(event, NotesDelivered):
            return False
        if isinstance(event, VerifyChecked):  # a verify command that cannot run stops the run with this as its error
            return event.state != "cannot-run"
        if isinstance(event, WorktreeOpening):  # said by the start line that follows
            return False
        return True

    def _ejections(self, event: Integrated, said: Said) -> str:
        """Each rejected task, and what follows: another attempt, told why, or none left."""
        of = f" of {self.max_attempts}" if self.max_attempts else ""
        lines = []
        for task in event.ejected:
            attempt = self.attempts.get(task, 1)
            if self.max_attempts is not None and attempt >= self.max_attempts:
                then = f"no attempt left ({attempt}{of}): it is dropped"
            else:
                then = f"retry {attempt + 1}{of} follows, told why"
            lines.append(dataclasses.replace(said, who=task).markup() + f"; {then}")
        return "\n".join(lines)
