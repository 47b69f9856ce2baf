"""`plait log`: each event on one line of plain text."""

from __future__ import annotations

from plait.events.types import (
    Event,
    GateChecked,
    Integrated,
    PlanMade,
    PlanRejected,
    PolicyDecided,
    RunFinished,
    RunStarted,
)
from plait.ui import _fmt
from plait.ui._event_lines import transcript_lines

__all__ = ["log_line"]


def _detail(event: Event) -> str:
    if isinstance(event, RunStarted):
        return f"{event.model} from {event.base_ref} @ {event.base_commit[:10]}: {event.task}"
    if isinstance(event, RunFinished):
        return f"{event.status} {event.branch} {event.commit[:10]} {event.reason}".strip()
    if isinstance(event, PlanMade):
        tasks = event.plan.get("tasks")
        return f"plan ({event.source}): {len(tasks) if isinstance(tasks, list) else '?'} task(s)"
    if isinstance(event, PlanRejected):
        return f"plan rejected (attempt {event.attempt}): {event.error}"
    if isinstance(event, GateChecked):
        return (
            f"{event.stage} {'passed' if event.passed else 'FAILED'} @ {event.commit[:10]} ({', '.join(event.tasks)})"
        )
    if isinstance(event, Integrated):
        ejected = f"; ejected {', '.join(event.ejected)}" if event.ejected else ""
        return f"{event.branch} @ {event.commit[:10]}: {', '.join(event.tasks)}{ejected} {event.reason}".strip()
    if isinstance(event, PolicyDecided):
        return f"{event.verdict} {event.action} {event.subject} {event.rule}".strip()
    lines = transcript_lines(event)
    return " ⏎ ".join(line.plain.strip() for line in lines[:3])


def log_line(event: Event, start: float) -> str:
    """`seq +time agent kind detail`, the detail on one line."""
    detail = _fmt.one_line(_detail(event), 160)
    return f"{event.seq:>6} {event.ts - start:>+9.2f}s {event.agent or '-':<16} {event.kind:<14} {detail}".rstrip()
