"""The `Integrator` of a one-agent run: the agent's result against the base, through the same gate as a merge."""

from __future__ import annotations

from dataclasses import dataclass

from plait.events.runlog import RunLog
from plait.events.types import GateChecked, Integrated
from plait.plan_model import PlanTask
from plait.reconcile.gate import Gate, GateResult
from plait.reconcile.verdict import gate_why

__all__ = ["GatedIntegrator", "Rejection"]


@dataclass(frozen=True)
class Rejection:
    """A commit the gate turned down: the branch that keeps it, and why in one line."""

    commit: str
    branch: str
    why: str


class GatedIntegrator:
    """Moves the run's result branch to an agent's commit only when the gate passes it.

    The first attempt commits on the result branch itself: when the gate turns that commit down, it is kept on
    `<branch>.1` and the result branch goes back to the last commit that passed (the base, at first). A verdict
    the log already holds for a commit (a resumed run) is read back, not checked again.
    """

    def __init__(self, gate: Gate, log: RunLog, branch: str) -> None:
        self.gate, self.log, self._branch = gate, log, branch
        self._head = gate.base
        for event in log.events(kinds=["integrated"]):
            if isinstance(event, Integrated) and event.branch == branch and event.tasks:
                self._head = event.commit
        self.rejected: Rejection | None = None
        """The last commit turned down."""

    @property
    def head(self) -> str:
        return self._head

    @property
    def branch(self) -> str:
        return self._branch

    def _logged(self, commit: str) -> GateResult | None:
        """The gate's verdict on `commit` as an earlier process of the run logged it, if it got that far."""
        for event in self.log.events(kinds=["gate"]):
            if not isinstance(event, GateChecked) or event.commit != commit or not event.tasks:
                continue
            if not event.passed or event.stage == "verify":
                return GateResult(event.passed, event.stage, event.output, (), commit)
        return None

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        result = self._logged(commit) or await self.gate.check(commit, tasks=[task.id], branches={task.id: commit})
        git, ref = self.gate.repo.git, f"refs/heads/{self._branch}"
        if result.passed:
            git("update-ref", "-m", f"plait: {task.id} passed the gate", ref, commit)
            self._head, self.rejected = commit, None
            self.log.append(
                Integrated(
                    run_id=self.log.run_id,
                    branch=self._branch,
                    commit=commit,
                    tasks=[task.id],
                    reason="passed the gate",
                )
            )
            return True, ""
        why = f"the {result.stage} check failed: {gate_why(result.stage, result.output)}"
        kept = branch
        if branch == self._branch:
            kept = f"{branch}.1"
            git("update-ref", "-m", f"plait: {task.id} turned down by the gate", f"refs/heads/{kept}", commit)
            git("update-ref", "-m", "plait: back to the last commit that passed", ref, self._head)
        self.rejected = Rejection(commit, kept, why)
        self.log.append(
            Integrated(run_id=self.log.run_id, branch=self._branch, commit=self._head, ejected=[task.id], reason=why)
        )
        return False, f"{why}\n{result.output}"
