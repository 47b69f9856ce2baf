"""The merge queue of one run: finished branches merged onto the integration branch, gated, bisected.

    submit ─► pending ─► drain: order by dependencies ─► merge each with the ladder (no work tree)
          ─► gate the batch's last commit ─► pass: move the branch ─► fail: find the culprit, eject it,
             move the branch to the last prefix that passed, rebuild the rest on it, gate again

The integration branch `plait/<run>/integration` only ever points at a commit that passed the gate. An
ejected branch is handed back to the caller, which decides whether its agent tries again.

The gate judges a batch by the failures it introduces on the head it lands on. A branch whose task the
plan builds on (`completed_by`: its dependents, still to come) may leave tests outside its own test files
failing for them; the last of them to land must make them pass (`_debts`). Such a branch, and one that
owes tests, is merged and gated alone, so that what it introduced is its own.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from plait.events.runlog import RunLog
from plait.events.types import Integrated, MergeStep, NotePosted
from plait.reconcile._bisect import find_culprit
from plait.reconcile._debts import Debt, Debts
from plait.reconcile._gitio import object_ids
from plait.reconcile._judge import STRICT, Allowance
from plait.reconcile._shipped import ship, take_back
from plait.reconcile._trees import changed_paths, changed_since_fork
from plait.reconcile.gate import Gate, GateResult
from plait.reconcile.ladder import merge_commits
from plait.reconcile.types import MergeContext, MergeOutcome, Resolution, Resolver, Rung
from plait.reconcile.verdict import gate_why, shorten
from plait.workspace import GitError, Repo, cap_output

__all__ = ["Debt", "Ejection", "MergeQueue", "QueueReport", "TaskBranch", "integration_branch"]

_OUTPUT_LIMIT = 8000
_StepOutcome = Literal["clean", "resolved", "conflict", "failed"]


def integration_branch(run_id: str) -> str:
    """The branch a run integrates into (beside, not above, its task branches `plait/<run>/<task>`)."""
    return f"plait/{run_id}/integration"


@dataclass(frozen=True)
class TaskBranch:
    """A finished task's branch, as submitted to the queue."""

    task_id: str
    branch: str
    commit: str
    instructions: str = ""
    summary: str = ""
    depends_on: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    """Notes the agent posted, shown to a resolver."""
    completed_by: tuple[str, ...] = ()
    """The tasks the plan builds on this one (its dependents), still to come when it lands."""


@dataclass(frozen=True)
class Ejection:
    """A branch the queue could not integrate: why (one line), the failing output, the unresolved paths."""

    task_id: str
    reason: str
    output: str = ""
    conflicts: tuple[str, ...] = ()
    stage: str = "merge"
    """`merge` (conflicts left) or the gate stage that failed: `parse`, `semantic`, `verify`."""
    failing: tuple[str, ...] = ()
    """The tests held against it, when the verify stage failed."""


@dataclass
class QueueReport:
    """What one `drain` did."""

    integrated: list[str] = field(default_factory=list)
    ejected: list[Ejection] = field(default_factory=list)
    head: str = ""
    resolutions: dict[str, list[Resolution]] = field(default_factory=dict)
    """The rungs that resolved each integrated task's conflicts."""
    gate_runs: int = 0
    deferred: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Tests an integrated task left failing for the tasks planned to build on it."""


@dataclass
class _Merged:
    task: TaskBranch
    commit: str
    outcome: MergeOutcome | None


def _ordered(batch: Sequence[TaskBranch]) -> list[TaskBranch]:
    """Submission order, except that a task comes after the tasks of the batch it depends on."""
    waiting, done, out = list(batch), set(), []
    ids = {t.task_id for t in batch}
    while waiting:
        ready = next((t for t in waiting if all(d in done or d not in ids for d in t.depends_on)), waiting[0])
        waiting.remove(ready)
        done.add(ready.task_id)
        out.append(ready)
    return out


class MergeQueue:
    """Integrates the finished branches of the run of `log` onto its integration branch, starting at `base`."""

    def __init__(
        self,
        repo: Repo,
        log: RunLog,
        base: str,
        *,
        gate: Gate,
        resolvers: Sequence[Resolver],
        branch: str | None = None,
    ) -> None:
        """A branch left by an earlier process of the same run is taken up where it stands."""
        self.repo, self.log, self.base = repo, log, base
        self.gate, self.resolvers = gate, list(resolvers)
        self.branch = branch or integration_branch(log.run_id)
        self._ref = f"refs/heads/{self.branch}"
        kept, at_base = object_ids(repo, [f"{self._ref}^{{commit}}", f"{base}^{{commit}}"])
        found = kept or ""
        if not found:  # a new run, or one resumed in another clone (its commits fetched from a shared log)
            found = take_back(repo, log, self.branch, base)
            repo.git("update-ref", self._ref, found or base, "")
        self._head = found or at_base or repo.git("rev-parse", "--verify", f"{base}^{{commit}}").strip()
        self.integrated: dict[str, TaskBranch] = {}
        self._touched: dict[str, set[str]] = {}
        self._forks: dict[str, tuple[str, str]] = {}
        """The integration head and commit each task's changes are told from (`_touched_by`)."""
        for event in log.events(kinds=["integrated"]):
            if isinstance(event, Integrated) and event.branch == self.branch:
                self.integrated.update({t: TaskBranch(t, "", "") for t in event.tasks})
        self._pending: list[TaskBranch] = []
        self._lock = asyncio.Lock()
        self.debts = Debts(log)

    @property
    def head(self) -> str:
        """The commit the integration branch points at: the last one that passed the gate."""
        return self._head

    async def submit(self, task: TaskBranch) -> None:
        """Queue a finished branch (a newer submission of the same task replaces a pending one)."""
        self._pending = [t for t in self._pending if t.task_id != task.task_id] + [task]

    async def drain(self) -> QueueReport:
        """Merge, gate and integrate everything pending, including what is submitted meanwhile."""
        async with self._lock:
            report = QueueReport(head=self._head)
            runs = self.gate.runs
            while self._pending:
                ordered = _ordered(self._pending)
                alone = next((i for i, t in enumerate(ordered) if self._alone(t)), len(ordered))
                batch = ordered[:alone] or ordered[:1]
                self._pending = ordered[len(batch) :]
                try:
                    await self._batch(batch, report)
                except BaseException:  # a failure or a cancellation: what was not settled stays pending
                    settled = {*report.integrated, *(e.task_id for e in report.ejected)}
                    self._pending = [t for t in batch if t.task_id not in settled] + self._pending
                    raise
            report.head, report.gate_runs = self._head, self.gate.runs - runs
            return report

    def owed_to(self, task_id: str) -> list[Debt]:
        """The tests integrated tasks left failing that `task_id` is planned to help make pass."""
        return self.debts.owed_to(task_id)

    def _alone(self, task: TaskBranch) -> bool:
        """Whether `task` is gated on its own: the plan lets it defer failures, or it owes some."""
        return bool(task.completed_by or self.debts.due(task.task_id, task.completed_by))

    def _allowance(self, prefix: Sequence[_Merged]) -> Allowance:
        if len(prefix) != 1:
            return STRICT
        task = prefix[0].task
        return Allowance(bool(task.completed_by), self.debts.due(task.task_id, task.completed_by))

    async def _batch(self, batch: list[TaskBranch], report: QueueReport) -> None:
        merged = await self._merge_all(batch, report, rebuilt_without="")
        while merged:
            tasks = [m.task.task_id for m in merged]
            result = await self._check(merged, len(merged) - 1)
            if result.passed:
                self._advance(merged, report, result.deferred)
                return
            position, failure = await find_culprit(tasks, result, functools.partial(self._check, merged))
            self._advance(merged[:position], report)
            culprit = merged[position].task
            self._eject(culprit, report, _gate_ejection(culprit.task_id, failure))
            merged = await self._merge_all([m.task for m in merged[position + 1 :]], report, culprit.task_id)

    async def _check(self, merged: Sequence[_Merged], position: int) -> GateResult:
        prefix = merged[: position + 1]
        branches = {m.task.task_id: m.task.commit for m in prefix}
        allow = self._allowance(prefix)
        return await self.gate.check(
            prefix[-1].commit, tasks=list(branches), branches=branches, against=self._head, allow=allow
        )

    async def _merge_all(self, batch: Sequence[TaskBranch], report: QueueReport, rebuilt_without: str) -> list[_Merged]:
        """Merge each branch onto the previous; a branch left with conflicts is ejected and skipped."""
        merged: list[_Merged] = []
        prefix = self._head
        for task in batch:
            if self.repo.is_ancestor(task.commit, prefix):
                self._step(task, "git", "clean", detail="nothing new to merge", commit=prefix)
                merged.append(_Merged(task, prefix, None))
                continue
            try:
                outcome = await merge_commits(
                    self.repo,
                    prefix,
                    task.commit,
                    resolvers=self.resolvers,
                    context=self._context_when_needed(task, [m.task for m in merged]),
                    message=self._message(task, rebuilt_without),
                    new_to_ours=True,
                )
            except GitError as exc:
                self._eject(task, report, Ejection(task.task_id, f"git could not merge it: {exc.detail}", str(exc)))
                continue
            self._record(task, outcome, rebuilt_without)
            if outcome.commit is None:
                self._eject(task, report, _conflict_ejection(task.task_id, outcome))
                continue
            prefix = outcome.commit
            merged.append(_Merged(task, prefix, outcome))
        return merged

    def _touched_by(self, task: TaskBranch) -> set[str]:
        """What `task` changed since its branch last took in the integration head (a claim may merge integrated work
        in), from the head and commit it had when it was first asked."""
        if task.task_id not in self._touched and task.task_id in self._forks:
            head, commit = self._forks[task.task_id]
            self._touched[task.task_id] = set(changed_since_fork(self.repo, head, commit, self.base))
        return self._touched.get(task.task_id, set())

    def _context_when_needed(self, task: TaskBranch, ahead: Sequence[TaskBranch]) -> Callable[[], MergeContext]:
        """`_context`, made when a resolver needs it (a clean merge never does); what each task touched is told from
        the integration head of now."""
        for t in [task, *self.integrated.values(), *ahead]:
            if t.commit:
                self._forks.setdefault(t.task_id, (self._head, t.commit))
        return functools.partial(self._context, task, [*self.integrated.values(), *ahead])

    def _context(self, task: TaskBranch, others: Sequence[TaskBranch]) -> MergeContext:
        """Both sides' intents; `ours` is told by the integrated tasks that touched the same paths."""
        mine = self._touched_by(task)
        ours = [t for t in others if t.commit and self._touched_by(t) & mine]
        return MergeContext(
            ours_task="\n\n".join(f"[{t.task_id}] {t.instructions}" for t in ours),
            theirs_task=task.instructions,
            ours_intent="\n\n".join(f"[{t.task_id}] {t.summary}" for t in ours if t.summary),
            theirs_intent=task.summary,
            notes=tuple(n for t in [*ours, task] for n in t.notes),
        )

    def _message(self, task: TaskBranch, rebuilt_without: str) -> str:
        title = f"plait: integrate {task.task_id} ({task.branch or task.commit[:10]})"
        again = f"\n\nRebuilt without {rebuilt_without}, which was ejected." if rebuilt_without else ""
        return f"{title}\n\n{task.summary.strip()}{again}\n\nplait run {self.log.run_id}\n"

    def _step(
        self,
        task: TaskBranch,
        rung: Rung,
        outcome: _StepOutcome,
        *,
        files: Sequence[str] = (),
        detail: str = "",
        commit: str = "",
    ) -> None:
        step = MergeStep(
            run_id=self.log.run_id,
            task=task.task_id,
            branch=task.branch,
            rung=rung,
            outcome=outcome,
            files=list(files),
            detail=detail,
            commit=commit,
        )
        self.log.append(step)

    def _record(self, task: TaskBranch, outcome: MergeOutcome, rebuilt_without: str) -> None:
        """One `MergeStep` for git's merge and one per rung that resolved a file."""
        note = f" (rebuilt without {rebuilt_without})" if rebuilt_without else ""
        conflicted = [r.path for r in outcome.resolutions] + [c.path for c in outcome.unresolved]
        if outcome.clean:
            self._step(task, "git", "clean", detail="merged by git" + note, commit=outcome.commit or "")
            return
        self._step(task, "git", "conflict", files=conflicted, detail=(outcome.detail or "git left conflicts") + note)
        for res in outcome.resolutions:
            self._step(task, res.rung, "resolved", files=[res.path], detail=res.reason, commit=outcome.commit or "")

    def _advance(self, merged: Sequence[_Merged], report: QueueReport, deferred: Sequence[str] = ()) -> None:
        """Move the integration branch to the last of `merged`, a commit that passed the gate.

        `deferred` are tests a lone branch left failing for the tasks planned to build on it.
        """
        if not merged:
            return
        old, new, tasks = self._head, merged[-1].commit, [m.task.task_id for m in merged]
        if new != self._head:
            ship(self.repo, self.log, self._head, new)  # before the move is logged
            self.repo.git("update-ref", "-m", f"plait: integrate {', '.join(tasks)}", self._ref, new, self._head)
            self._head = new
        for m in merged:
            self.integrated[m.task.task_id] = m.task
            report.integrated.append(m.task.task_id)
            report.resolutions[m.task.task_id] = list(m.outcome.resolutions) if m.outcome else []
            self.debts.landed(m.task.task_id, m.task.completed_by, deferred if len(merged) == 1 else ())
        reason = "passed the gate"
        if deferred:
            report.deferred[tasks[0]] = tuple(deferred)
            until = ", ".join(merged[0].task.completed_by)
            reason += f"; left failing for {until} to make pass: {', '.join(deferred)}"
        self.log.append(Integrated(run_id=self.log.run_id, branch=self.branch, commit=new, tasks=tasks, reason=reason))
        for m in merged:
            self._announce(m.task, old, m.commit)
            old = m.commit

    def _announce(self, task: TaskBranch, before: str, commit: str) -> None:
        """On the board, tell the agents at work whose files the merge of `task` (`before` to `commit`) changed."""
        files = sorted(changed_paths(self.repo, before, commit)) if before != commit else []
        if not files:
            return
        shown = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
        summary = shorten(task.summary.strip().splitlines()[0], 300) if task.summary.strip() else ""
        text = f"Task {task.task_id} is integrated (commit {commit[:10]}); it changed {shown}."
        if summary:
            text += f" Its summary: {summary}"
        self.log.append(
            NotePosted(run_id=self.log.run_id, agent="merge-queue", topic="integrated", text=text, paths=files)
        )

    def _eject(self, task: TaskBranch, report: QueueReport, ejection: Ejection) -> None:
        rung_outcome: _StepOutcome = "conflict" if ejection.stage == "merge" else "failed"
        self._step(task, "redo", rung_outcome, files=list(ejection.conflicts), detail=ejection.reason)
        self.log.append(
            Integrated(
                run_id=self.log.run_id,
                branch=self.branch,
                commit=self._head,
                ejected=[task.task_id],
                reason=ejection.reason,
            )
        )
        report.ejected.append(ejection)


def _conflict_ejection(task_id: str, outcome: MergeOutcome) -> Ejection:
    paths = tuple(c.path for c in outcome.unresolved)
    shown = "\n\n".join(f"--- {c.path}\n{c.merged}" if c.merged else f"--- {c.path}" for c in outcome.unresolved)
    reason = f"conflicts no rung could resolve in {', '.join(paths)}"
    return Ejection(task_id, reason, cap_output(shown, _OUTPUT_LIMIT), paths, "merge")


def _gate_ejection(task_id: str, failure: GateResult) -> Ejection:
    first = next((line.strip() for line in failure.output.splitlines() if line.strip()), "")
    why = gate_why(failure.stage, failure.output) if first.startswith("$ ") else first  # the gate's own verdict
    reason = shorten(f"the {failure.stage} check failed once it was merged: {why}", 300)
    output = cap_output(failure.output, _OUTPUT_LIMIT)
    return Ejection(task_id, reason, output, (), failure.stage, failure.failing)
