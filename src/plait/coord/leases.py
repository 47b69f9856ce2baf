"""Leases on paths: a task edits its own write-set freely and claims anything else before editing it.

A claim on a path another running task holds (in its write-set, or claimed) waits until that task
ends, then is granted: agents take turns on a file instead of editing it at once. A wait is bounded
(`wait` seconds, then the claim is refused, naming the holder) and never deadlocks: the leases see
every wait of the run, and a claim whose wait would close a cycle (A waits for B, which waits for A)
is refused at once, naming the cycle, so that its agent works around it. Files matched by `shared`
(a changelog, where each task adds its own entry) need no claim: the merge keeps every task's lines.
Files the plan declares shared (`Plan.shared`: a registry each task adds to) are held by no task's
write-set; a run passes them as `shared` too, so that tasks add their lines at the same time and the merge
keeps them side by side (without that, every task claims one to edit it and the additions are made in turn).
Claims end when their task ends (`release_all`) or after a timeout. Every claim, wait, refusal,
broken cycle and release is a `LeaseChanged` in the log, which rebuilds the claims.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from plait.events.runlog import RunLog
from plait.events.types import LeaseAction, LeaseChanged, TaskFinished
from plait.globs import matches, normalize
from plait.plan_model import Plan

__all__ = ["Claim", "Leases", "Refusal"]

_ACTIVE = ("task_started", "model_request")


@dataclass(frozen=True)
class Claim:
    """A task may edit `path`: it is in its write-set (`own`), `shared`, or claimed until `until`."""

    task: str
    path: str
    why: str
    until: float = 0.0
    own: bool = False
    shared: bool = False
    after: tuple[str, ...] = ()
    """The tasks the claim waited for, in order, when it had to wait."""

    @property
    def message(self) -> str:
        if self.own:
            return f"{self.path} is in your own write-set: edit it freely, no claim is needed."
        if self.shared:
            return (
                f"{self.path} is shared by every task (each adds its own entries): edit it without a claim, "
                "keep your change to your own lines; the merge keeps every task's additions."
            )
        if self.after:
            return f"claimed {self.path} after task `{self.after[-1]}` finished; the claim lasts until your task ends."
        return f"claimed {self.path} for you ({self.why}); the claim lasts until your task ends."


@dataclass(frozen=True)
class Refusal:
    """`task` may not edit `path`: `holder` owns it or claimed it, for `why`."""

    task: str
    path: str
    holder: str
    holder_title: str
    why: str
    waited: float = 0.0
    """Seconds the claim waited before it was refused (0: refused at once)."""
    cycle: tuple[str, ...] = ()
    """The tasks of the cycle of waits the claim would have closed, starting and ending with `task`."""

    @property
    def message(self) -> str:
        ask = (
            f'post a note to `{self.holder}` (post_note with to=["{self.holder}"]) saying exactly what you need '
            "changed there"
        )
        if self.cycle:
            chain = " → ".join(f"`{t}`" for t in self.cycle)
            return (
                f"refused: {self.path} is held by task `{self.holder}` ({self.holder_title}), and waiting for it "
                f"would deadlock: {self.why}, so the cycle of waits {chain} would never end. Do not edit it and do "
                f"not claim it again: work around it within your own files, or {ask}."
            )
        head = f"refused after waiting {self.waited:.0f}s" if self.waited else "refused"
        return (
            f"{head}: {self.path} is held by task `{self.holder}` ({self.holder_title}): {self.why}. "
            f"Do not edit it. Either {ask}, or work around it within your own files. "
            "You may claim it again later; it is freed when that task ends."
        )


def _overlap(a: str, b: str) -> bool:
    return matches([a], b) or matches([b], a)


def _clean(path: str) -> str:
    return normalize(path).rstrip("/")


class Leases:
    """The claims of the run of `log` on paths outside each task's write-set in `plan`, and the waits for them."""

    def __init__(
        self,
        log: RunLog,
        plan: Plan,
        *,
        timeout: float = 600.0,
        wait: float = 300.0,
        shared: Sequence[str] = (),
        tracked: bool = False,
        clock: Callable[[], float] = time.time,
        poll: float = 1.0,
    ) -> None:
        """`timeout` ends a claim, `wait` bounds a wait for one; `poll` is how often a wait looks again.

        With `tracked`, the run says which tasks are at work (`start` to `release_all`); otherwise a task
        is at work from its first event in the log to its `task_finished`.
        """
        self.log, self.plan = log, plan
        self.timeout, self.wait, self.clock, self.poll = timeout, wait, clock, poll
        self.shared, self.tracked = list(shared), tracked
        self.claims: dict[str, Claim] = {}
        self._titles = {t.id: t.title for t in plan.tasks}
        self._writes = {t.id: list(t.writes) for t in plan.tasks}
        self._turns = [normalize(p) for p in plan.shared]
        """Paths tasks take turns on: in no write-set, claimed by whoever edits them."""
        self._active: dict[str, int] = {}
        self._finished: dict[str, int] = {}
        self._cursor = 0
        self._lock = threading.RLock()
        self._begun: set[str] = set()
        self._waits: dict[str, tuple[str, str]] = {}
        self._wakers: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @classmethod
    def from_log(
        cls,
        log: RunLog,
        plan: Plan,
        *,
        timeout: float = 600.0,
        wait: float = 300.0,
        shared: Sequence[str] = (),
        tracked: bool = False,
    ) -> Leases:
        """The leases of a run being resumed, as its log left them (waits end with their process)."""
        leases = cls(log, plan, timeout=timeout, wait=wait, shared=shared, tracked=tracked)
        for event in log.events(kinds=["lease"]):
            if not isinstance(event, LeaseChanged):
                continue
            path, task = event.path, event.task
            if event.action == "claim":
                leases.claims[path] = Claim(task, path, event.why, event.until, after=tuple(event.after))
            elif event.action in ("release", "expire") and path in leases.claims:
                if leases.claims[path].task == task:
                    del leases.claims[path]
        return leases

    def owns(self, task_id: str, path: str) -> bool:
        """Whether `path` is in the write-set of `task_id` (and not one the plan has tasks take turns on)."""
        return matches(self._writes.get(task_id, []), normalize(path)) and not self._taken_in_turn(path)

    def _taken_in_turn(self, path: str) -> bool:
        return bool(self._turns) and matches(self._turns, normalize(path))

    def is_shared(self, path: str) -> bool:
        """Whether every task may edit `path` without a claim."""
        return bool(self.shared) and matches(self.shared, normalize(path))

    def needs_claim(self, task_id: str, path: str) -> bool:
        """Whether `task_id` must claim `path` before it edits it."""
        return not self.owns(task_id, path) and not self.is_shared(path)

    def start(self, task_id: str) -> None:
        """`task_id` is at work: from now until `release_all`, it holds its write-set."""
        with self._lock:
            self._begun.add(task_id)

    def running(self, task_id: str) -> bool:
        """Whether `task_id` is at work now."""
        with self._lock:
            if task_id in self._begun or self.tracked:
                return task_id in self._begun
            self._sync()
            return self._active.get(task_id, 0) > self._finished.get(task_id, 0)

    def waits(self) -> dict[str, tuple[str, str]]:
        """The waits under way: for each waiting task, the task it waits for and the path."""
        with self._lock:
            return dict(self._waits)

    def claim(self, task_id: str, path: str, why: str) -> Claim | Refusal:
        """Claim `path` for `task_id` without waiting: refused at once when a running task holds it."""
        path = _clean(path)
        free = self._free(task_id, path, why)
        if free is not None:
            return free
        with self._lock:
            refusal = self._refusal(task_id, path)
            if refusal is None:
                return self._grant(task_id, path, why, [])
            self._record(task_id, path, refusal.holder, "refuse", f"refused: held by {refusal.holder}", why)
            return refusal

    async def acquire(self, task_id: str, path: str, why: str, *, wait: float | None = None) -> Claim | Refusal:
        """Claim `path` for `task_id`, waiting while a running task holds it.

        The wait ends when no running task holds the path any more (granted), after `wait` seconds (the
        leases' own `wait` by default; refused, naming the holder), or at once when it would close a cycle
        of waits (refused, naming the cycle). Cancelling the caller ends its wait.
        """
        path = _clean(path)
        free = self._free(task_id, path, why)
        if free is not None:
            return free
        limit = self.wait if wait is None else wait
        deadline = time.monotonic() + limit
        loop = asyncio.get_running_loop()
        waited: list[str] = []
        while True:
            with self._lock:
                refusal = self._refusal(task_id, path)
                if refusal is None:
                    return self._grant(task_id, path, why, waited)
                holder = refusal.holder
                cycle = self._cycle(task_id, holder, path)
                if cycle is not None:
                    return self._break(refusal, why, cycle)
                left = deadline - time.monotonic()
                if left <= 0:
                    spent = limit if waited else 0.0
                    self._record(task_id, path, holder, "refuse", f"refused: held by {holder}", why, waited=spent)
                    return replace(refusal, waited=spent)
                if not waited or waited[-1] != holder:
                    waited.append(holder)
                    self._record(task_id, path, holder, "wait", f"waits for {holder} to finish with {path}", why)
                self._waits[task_id] = (holder, path)
                woken: asyncio.Future[None] = loop.create_future()
                self._wakers.append((loop, woken))
            try:
                await asyncio.wait([woken], timeout=min(left, self.poll))
            finally:
                with self._lock:
                    self._waits.pop(task_id, None)
                    self._wakers = [w for w in self._wakers if w[1] is not woken]

    def release(self, task_id: str, path: str, why: str) -> bool:
        """End `task_id`'s claim on `path`; returns whether it held one."""
        path = _clean(path)
        with self._lock:
            claim = self.claims.get(path)
            if claim is None or claim.task != task_id:
                return False
            del self.claims[path]
            self._record(task_id, path, task_id, "release", f"released {path}", why)
        self._notify()
        return True

    def release_all(self, task_id: str) -> list[str]:
        """`task_id`'s attempt ended: end every claim it held and wake the claims waiting for it."""
        with self._lock:
            self._begun.discard(task_id)
            freed = [p for p, c in self.claims.items() if c.task == task_id]
            for path in freed:
                del self.claims[path]
                self._record(task_id, path, task_id, "release", f"released {path}", "the task ended")
        self._notify()
        return freed

    def record_update(self, task_id: str, path: str, head: str, conflicts: Sequence[str]) -> None:
        """Log that `task_id`'s worktree took (or, with `conflicts`, could not take) the integrated work on `path`."""
        if conflicts:
            decision = f"could not merge the integrated work on {path}: conflicts in {', '.join(conflicts)}"
        else:
            decision = f"merged the integrated work on {path} (integration head {head[:10]})"
        with self._lock:
            self._record(task_id, path, task_id, "update", decision, "", head=head, conflicts=list(conflicts))

    def holders(self) -> dict[str, Claim]:
        """The live claims, by path."""
        with self._lock:
            self._expire()
            return dict(self.claims)

    def _free(self, task_id: str, path: str, why: str) -> Claim | None:
        if self.owns(task_id, path):
            return Claim(task_id, path, why, own=True)
        if self.is_shared(path):
            return Claim(task_id, path, why, shared=True)
        return None

    def _grant(self, task_id: str, path: str, why: str, waited: list[str]) -> Claim:
        granted = Claim(task_id, path, why, self.clock() + self.timeout, after=tuple(waited))
        self.claims[path] = granted
        decision = f"claimed {path}" + (f" after {waited[-1]} finished" if waited else "")
        self._record(task_id, path, task_id, "claim", decision, why, until=granted.until, after=waited)
        return granted

    def _refusal(self, task_id: str, path: str) -> Refusal | None:
        self._expire()
        for other, writes in self._writes.items() if not self._taken_in_turn(path) else ():
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

    def _cycle(self, task_id: str, holder: str, path: str) -> list[tuple[str, str]] | None:
        """The waits (task, path) from `task_id` back to itself, were it to wait for `holder`; None if no cycle."""
        chain, seen, current = [(task_id, path)], {task_id}, holder
        while current not in seen:
            if current not in self._waits:
                return None
            seen.add(current)
            waited_for, waited_path = self._waits[current]
            chain.append((current, waited_path))
            current = waited_for
        return chain if current == task_id else None

    def _break(self, refusal: Refusal, why: str, chain: list[tuple[str, str]]) -> Refusal:
        """Refuse the claim that would close a cycle of waits, and log the broken cycle."""
        tasks = [t for t, _ in chain] + [chain[0][0]]
        steps = [f"`{a}` waits for `{b}` ({p})" for (a, p), b in zip(chain, tasks[1:], strict=True)]
        said = ", ".join(steps[1:]).replace(f"`{refusal.task}`", "you")
        broken = replace(refusal, why=said or refusal.why, cycle=tuple(tasks))
        self._record(
            refusal.task,
            refusal.path,
            refusal.holder,
            "cycle",
            f"refused {refusal.path}: waiting would close the cycle {' → '.join(tasks)}",
            why,
            cycle=tasks,
        )
        return broken

    def _notify(self) -> None:
        with self._lock:
            wakers, self._wakers = self._wakers, []
        for loop, future in wakers:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_wake, future)

    def _expire(self) -> None:
        now = self.clock()
        for path, claim in list(self.claims.items()):
            if claim.until <= now:
                del self.claims[path]
                self._record(claim.task, path, claim.task, "expire", f"claim on {path} expired", claim.why)

    def _record(
        self, task: str, path: str, holder: str, action: LeaseAction, decision: str, why: str, **more: Any
    ) -> None:
        ids = {"run_id": self.log.run_id, "agent": task, "task": task, "path": path, "holder": holder}
        self.log.append(LeaseChanged(**ids, action=action, why=why, decision=decision, reason=why, **more))

    def _sync(self) -> None:
        for event in self.log.events(kinds=[*_ACTIVE, "task_finished"], after=self._cursor):
            self._cursor = max(self._cursor, event.seq)
            if isinstance(event, TaskFinished):
                self._finished[event.agent] = event.seq
            else:
                self._active[event.agent] = event.seq


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
