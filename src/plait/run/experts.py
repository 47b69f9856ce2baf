"""The persistent experts of a parallel run: who they are, their read-only checkout of the base, their budgets.

A run's experts are those its settings declare and those its plan proposes; a resumed run keeps the
ones its log started (their conversations are rebuilt from the log, nothing paid twice). They share one
detached checkout of the run's base commit, made when the run starts and removed when it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from plait.agent.budget import Budget, Limits
from plait.coord.experts import Expert, Experts, ExpertSpec, Origin, expert_id, specs_from_log
from plait.events.runlog import RunLog
from plait.messages import Model
from plait.models.pricing import PriceTable
from plait.plan_model import Plan
from plait.reconcile.verify import IntegrationWorktree
from plait.run.backends import AttemptBackend
from plait.settings import Settings
from plait.workspace import Repo

__all__ = ["RunExperts", "run_expert_specs"]


def run_expert_specs(settings: Settings, plan: Plan, log: RunLog) -> list[tuple[ExpertSpec, Origin]]:
    """The run's experts: those its log started (as they were), then the settings', then the plan's; by name."""
    found: dict[str, tuple[ExpertSpec, Origin]] = {}
    for spec, started in specs_from_log(log):
        found[spec.name] = (spec, started.origin)
    for spec in settings.experts:
        found.setdefault(spec.name, (spec, "config"))
    for spec in plan.experts:
        found.setdefault(spec.name, (spec, "planner"))
    return list(found.values())


class RunExperts:
    """The experts of one run, each with its own budget under the run's: made by `open`, ended by `close`."""

    def __init__(
        self,
        specs: Sequence[tuple[ExpertSpec, Origin]],
        *,
        repo: Repo,
        log: RunLog,
        model: Model,
        prices: PriceTable,
        commit: str,
        budget: Budget | None = None,
        repo_map: str = "",
        settings: Settings,
        backend: AttemptBackend | None = None,
    ) -> None:
        """With `backend`, the experts run where it places them (no checkout here)."""
        self.specs = list(specs)
        self.backend = backend
        self.repo, self.log, self.model, self.prices = repo, log, model, prices
        self.commit, self.repo_map, self.settings = commit, repo_map, settings
        self.budgets: dict[str, Budget] = {}
        if budget is not None:
            self.budgets = {expert_id(s.name): budget.child(expert_id(s.name), Limits()) for s, _ in self.specs}
        path = repo.plait_dir() / "worktrees" / log.run_id / "_experts"
        self.checkout = IntegrationWorktree(repo, path, keep=())
        self.experts = Experts()

    async def open(self) -> Experts:
        """Check the base out (once) and make the experts; a resumed expert finds its questions in the log."""
        if not self.specs or len(self.experts):
            return self.experts
        if self.backend is not None:
            self.experts = await self.backend.open_experts(
                [(s, str(o)) for s, o in self.specs], self.log.run_id, self.commit, self.repo_map
            )
            return self.experts
        root = await asyncio.to_thread(self.checkout.checkout, self.commit)
        for spec, origin in self.specs:
            expert = Expert.from_settings(
                spec,
                self.settings,
                log=self.log,
                model=self.model,
                root=root,
                commit=self.commit,
                origin=origin,
                repo_map=self.repo_map,
                budget=self.budgets.get(expert_id(spec.name)),
                prices=self.prices,
            )
            self.experts.add(expert)
        return self.experts

    async def close(self) -> None:
        """Stop any answer in progress and remove the checkout."""
        await self.experts.close()
        if self.backend is not None:
            self.backend.close_experts()
        elif self.specs:
            await asyncio.to_thread(self.checkout.remove)
