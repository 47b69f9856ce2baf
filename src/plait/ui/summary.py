"""What a person wants to know of a run, computed from its events alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from plait.trust import REPO_FILE
from plait.ui._reduce import RunView
from plait.ui._state import TokenSum

if TYPE_CHECKING:  # a log read without the models is summarized too
    from plait.events.store import EventStore
    from plait.events.types import Event

__all__ = ["RunSummary", "config_note", "summarize"]


def config_note(who: str) -> str:
    """The line saying `who` (a task, a run) changed the repository's `.plait.toml`."""
    return (
        f"{who} changed {REPO_FILE} (plait's settings, the sandbox's included): review it before you trust "
        "this repository with it (`plait trust`); until you do, only what narrows in it is obeyed"
    )


@dataclass
class RunSummary:
    run_id: str
    task: str = ""
    model: str = ""
    repo: str = ""
    base_commit: str = ""
    started: float = 0.0
    ended: float | None = None
    status: str = "running"
    """running (or unfinished, if its process died), done, failed or interrupted."""
    reason: str = ""
    branch: str = ""
    commit: str = ""
    model_calls: int = 0
    tool_calls: int = 0
    usage: TokenSum = field(default_factory=TokenSum)
    billed_tokens: float = 0.0
    """The tokens as the providers bill them, cached and cache-written input weighed by their price."""
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Model calls of a model with no price: their dollars are unknown, not zero."""
    tasks: dict[str, str] = field(default_factory=dict)
    experts: dict[str, int] = field(default_factory=dict)
    """Questions each expert answered (by its agent id); experts are not tasks."""
    config_changes: list[str] = field(default_factory=list)
    """Tasks whose commits changed the repository's `.plait.toml`, to be reviewed before it is trusted."""

    @property
    def duration_s(self) -> float | None:
        return None if self.ended is None else self.ended - self.started

    def as_json(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "task": self.task,
            "model": self.model,
            "repo": self.repo,
            "base_commit": self.base_commit,
            "status": self.status,
            "reason": self.reason,
            "branch": self.branch,
            "commit": self.commit,
            "started": self.started,
            "duration_s": self.duration_s,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "usage": self.usage.as_json(),
            "billed_tokens": round(self.billed_tokens),
            "cost_usd": round(self.cost_usd, 6),
            "unpriced_calls": self.unpriced_calls,
            "tasks": self.tasks,
            "experts": self.experts,
            "config_changes": self.config_changes,
        }

    @property
    def cost_text(self) -> str:
        """The dollars, or `unpriced` when the model has no price."""
        from plait.ui._fmt import usd as usd_text  # _fmt reads the run view: `plait runs` needs only this

        return usd_text(self.cost_usd, calls=self.model_calls, unpriced=self.unpriced_calls)

    def notes(self) -> list[str]:
        """Lines a person must read before taking the result: a changed `.plait.toml` first of all."""
        if not self.config_changes:
            return []
        tasks = "task" if len(self.config_changes) == 1 else "tasks"
        return [config_note(f"{tasks} {', '.join(self.config_changes)}")]


def summarize(run_id: str, events: list[Event]) -> RunSummary:
    """The run's summary, read off the one fold of its log (`RunView`)."""
    view = RunView.of(run_id, events)
    finish = view.finish
    return RunSummary(
        run_id=run_id,
        task=view.task,
        model=view.model,
        repo=view.repo,
        base_commit=view.base_commit,
        started=view.started or 0.0,
        ended=view.ended,
        status=view.status,
        reason=view.reason,
        branch=finish.branch if finish is not None else "",
        commit=finish.commit if finish is not None else "",
        model_calls=view.model_calls,
        tool_calls=view.tool_calls,
        usage=view.usage,
        billed_tokens=view.total.billed_tokens,
        cost_usd=view.cost_usd,
        unpriced_calls=view.unpriced_calls,
        tasks=dict(view.tasks),
        experts=dict(view.experts),
        config_changes=list(view.config_changes),
    )


def load_summary(store: EventStore, run_id: str) -> RunSummary:
    return summarize(run_id, store.events(run_id))
