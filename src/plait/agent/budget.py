"""Spending limits per run and per task: checked before every model call, warned of at 80%."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from plait.events.runlog import RunLog
from plait.events.types import Decision
from plait.messages import Usage

__all__ = ["Budget", "BudgetExceeded", "Limits", "spent"]

WARN_AT = 0.8


class Limits(BaseModel):
    """None means unlimited."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: int | None = Field(None, ge=1)
    usd: float | None = Field(None, gt=0)
    wall_s: float | None = Field(None, gt=0)


class BudgetExceeded(Exception):
    """A control-flow signal, not a failure: the scope spent what it was allowed."""

    def __init__(self, scope: str, what: str) -> None:
        super().__init__(f"{scope} budget spent: {what}")
        self.scope, self.what = scope, what


@dataclass
class Budget:
    """The spending of one scope (`run`, or a task id), charged to it and to its parent."""

    scope: str
    limits: Limits
    log: RunLog
    parent: Budget | None = None
    usage: Usage = field(default_factory=Usage)
    usd: float = 0.0
    started: float = field(default_factory=time.monotonic)
    _warned: set[str] = field(default_factory=set)
    _stopped: bool = False

    def child(self, scope: str, limits: Limits) -> Budget:
        return Budget(scope=scope, limits=limits, log=self.log, parent=self)

    def charge(self, usage: Usage, usd: float, *, up: bool = True) -> None:
        """Add spending to this scope and, with `up`, to the scopes above it."""
        self.usage, self.usd = self.usage + usage, self.usd + usd
        if up and self.parent is not None:
            self.parent.charge(usage, usd)

    def check(self) -> None:
        """Raise `BudgetExceeded` when this scope or a parent is spent; record a warning at 80%."""
        if self.parent is not None:
            self.parent.check()
        elapsed = time.monotonic() - self.started
        for name, spent, limit, shown in (
            ("tokens", self.usage.total_tokens, self.limits.tokens, f"{self.usage.total_tokens} tokens"),
            ("usd", self.usd, self.limits.usd, f"${self.usd:.4f}"),
            ("wall_s", elapsed, self.limits.wall_s, f"{elapsed:.0f}s"),
        ):
            if limit is None:
                continue
            if spent >= limit:
                self._record("stop", f"{self.scope} stopped at its {name} limit: {shown} of {limit}", name)
                raise BudgetExceeded(self.scope, f"{shown} of {limit}")
            if spent >= WARN_AT * limit and name not in self._warned:
                self._warned.add(name)
                self._record("warn", f"{self.scope} has spent {spent / limit:.0%} of its {name} limit", name)

    def _record(self, level: str, message: str, limit: str) -> None:
        if level == "stop":
            if self._stopped:
                return
            self._stopped = True
        self.log.append(
            Decision(
                run_id=self.log.run_id,
                agent="" if self.scope == "run" else self.scope,
                topic="budget",
                decision=message,
                data={"level": level, "limit": limit, "scope": self.scope},
            )
        )


def spent(paid: Iterable[tuple[Usage, float]]) -> tuple[Usage, float]:
    """What calls paid, each its usage and dollars, adds up to: summed field by field, one `Usage` made in all."""
    tokens = dict.fromkeys(Usage.model_fields, 0)
    usd = 0.0
    for usage, cost in paid:
        for name in tokens:
            tokens[name] += getattr(usage, name)
        usd += cost
    return Usage(**tokens), usd
