"""Leases on paths: a task edits its own write-set freely and claims anything else before editing it.

A claim is refused, never waited for, when another running task has the path in its write-set or
holds a live claim on it: the refusal says who and why and what to do, so no task ever blocks and
no cycle of waits can form. Claims end when their task ends (`release_all`) or after a timeout.
Every claim, refusal and release is a `Decision(topic="lease")` in the log, which rebuilds the state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from plait.events.store import EventStore
from plait.events.types import Decision, TaskFinished
from plait.plan.globs import matches, normalize
from plait.plan.model import Plan

__all__ = ["Claim", "Leases", "Refusal"]

_ACTIVE = ("task_started", "model_request")


@dataclass(frozen=True)
class Claim:
    """A task may edit `path`: it is in its write-set (`own`) or it holds the claim until `until`."""

    task: str
    path: str
    why: str
    until: float = 0.0
    own: bool = False

    @property
    def message(self) -> str:
        if self.own:
            return f"{self.path} is in your own write-set: edit it freely, no claim is needed."
        return f"claimed {self.path} for you ({self.why}); the claim lasts until your task ends."


@dataclass(frozen=True)
class Refusal:
    """`task` may not edit `path`: `holder` owns it or claimed it, for `why`."""

    task: str
    path: str
    holder: str
    holder_title: str
    why: str

    @property
    def message(self) -> str:
        return (
            f"refused: {self.path} is held by task `{self.holder}` ({self.holder_title}): {self.why}. "
            f'Do not edit it. Either post a note to `{self.holder}` (post_note with to=["{self.holder}"]) '
            "saying exactly what you need changed there, or work around it within your own files. "
            "You may claim it again later; it is freed when that task ends."
        )


def _overlap(a: str, b: str) -> bool:
    return matches([a], b) or matches([b], a)


class Leases:
    """The claims of run `run_id` on paths outside each task's write-set in `plan`."""

    def __init__(
        self,
        store: EventStore,
        run_id: str,
        plan: Plan,
        *,
        timeout: float = 600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.run_id, self.plan = store, run_id, plan
        self.timeout, self.clock = timeout, clock
        self.claims: dict[str, Claim] = {}
        self._titles = {t.id: t.title for t in plan.tasks}
        self._writes = {t.id: list(t.writes) for t in plan.tasks}
        self._active: dict[str, int] = {}
        self._finished: dict[str, int] = {}
        self._cursor = 0
        self._lock = threading.RLock()

    @classmethod
    def from_log(cls, store: EventStore, run_id: str, plan: Plan, *, timeout: float = 600.0) -> Leases:
        """The leases of a run being resumed, as its log left them."""
        leases = cls(store, run_id, plan, timeout=timeout)
        for event in store.events(run_id, kinds=["decision"]):
            if not (isinstance(event, Decision) and event.topic == "lease"):
                continue
            data = event.data
            path, task = str(data.get("path", "")), str(data.get("task", ""))
            if data.get("action") == "claim":
                until = float(data.get("until", 0.0))
                leases.claims[path] = Claim(task, path, str(data.get("why", "")), until)
            elif data.get("action") in ("release", "expire") and path in leases.claims:
                if leases.claims[path].task == task:
                    del leases.claims[path]
        return leases

    def owns(self, task_id: str, path: str) -> bool:
        """Whether `path` is in the write-set of `task_id`."""
        return matches(self._writes.get(task_id, []), normalize(path))

    def running(self, task_id: str) -> bool:
        """Whether `task_id` has been active in the log since it last finished."""
        with self._lock:
            self._sync()
            return self._active.get(task_id, 0) > self._finished.get(task_id, 0)

    def claim(self, task_id: str, path: str, why: str) -> Claim | Refusal:
        """Claim `path` for `task_id`; refused at once (never waits) when a running task holds it."""
        path = normalize(path).rstrip("/")
        if self.owns(task_id, path):
            return Claim(task_id, path, why, own=True)
        with self._lock:
            refusal = self._refusal(task_id, path, why)
            if refusal is not None:
                self._record(refusal.task, path, refusal.holder, "refuse", f"refused: held by {refusal.holder}", why)
                return refusal
            granted = Claim(task_id, path, why, self.clock() + self.timeout)
            self.claims[path] = granted
            self._record(task_id, path, task_id, "claim", f"claimed {path}", why, until=granted.until)
            return granted

    def release_all(self, task_id: str) -> list[str]:
        """End every claim of `task_id` (its attempt ended); returns the paths freed."""
        with self._lock:
            freed = [p for p, c in self.claims.items() if c.task == task_id]
            for path in freed:
                del self.claims[path]
                self._record(task_id, path, task_id, "release", f"released {path}", "the task ended")
        return freed

    def holders(self) -> dict[str, Claim]:
        """The live claims, by path."""
        with self._lock:
            self._expire()
            return dict(self.claims)

    def _refusal(self, task_id: str, path: str, why: str) -> Refusal | None:
        self._expire()
        for other, writes in self._writes.items():
            if other != task_id and self.running(other) and any(_overlap(w, path) for w in writes if w[:1] != "!"):
                return Refusal(task_id, path, other, self._titles[other], "it is in that task's write-set")
        for held, claim in self.claims.items():
            if claim.task == task_id or not _overlap(held, path):
                continue
            if claim.task in self._titles and not self.running(claim.task):
                continue
            title = self._titles.get(claim.task, claim.task)
            return Refusal(task_id, path, claim.task, title, f"it claimed {held} ({claim.why})")
        return None

    def _expire(self) -> None:
        now = self.clock()
        for path, claim in list(self.claims.items()):
            if claim.until <= now:
                del self.claims[path]
                self._record(claim.task, path, claim.task, "expire", f"claim on {path} expired", claim.why)

    def _record(
        self, task: str, path: str, holder: str, action: str, decision: str, why: str, until: float = 0.0
    ) -> None:
        data = {"path": path, "task": task, "holder": holder, "action": action, "why": why, "until": until}
        self.store.append(
            Decision(run_id=self.run_id, agent=task, topic="lease", decision=decision, reason=why, data=data)
        )

    def _sync(self) -> None:
        for event in self.store.events(self.run_id, kinds=[*_ACTIVE, "task_finished"], after=self._cursor):
            self._cursor = max(self._cursor, event.seq)
            if isinstance(event, TaskFinished):
                self._finished[event.agent] = event.seq
            else:
                self._active[event.agent] = event.seq
