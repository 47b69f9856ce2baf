"""A run's persistent experts as named Ray actors: each keeps its conversation for the run, wherever it is placed.

    driver: one actor per expert, named `plait:RUN:expert` ──► the actor clones the run's base from its bundle,
    opens the shared log and builds the expert (its conversation rebuilt from the log if it is one restarted)
    worker: `ask_expert` ──► ray.get_actor(name).ask(...) ──► the expert's answer

An actor whose node dies is restarted by Ray elsewhere; its questions and answers are in the shared log, so the
restarted expert reads its past turns back without paying for them again, and a question asked again with the
same key is not asked twice.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plait.coord.answering import Answer
from plait.coord.experts import Experts, ExpertSpec, expert_id, roster

__all__ = ["ActorExperts", "ExpertActor", "ExpertJob", "NAMESPACE", "actor_name"]

NAMESPACE = "plait"


def actor_name(run_id: str, name: str) -> str:
    return f"plait:{run_id}:{expert_id(name)}"


@dataclass(frozen=True)
class ExpertJob:
    """What an expert's actor needs (plain values only)."""

    run_id: str
    spec: dict[str, Any]
    origin: str
    commit: str
    model: str
    settings: dict[str, Any]
    store: str
    scope: str
    repo_map: str = ""


class ExpertActor:
    """The body of an expert's Ray actor (made one by the ray backend): the expert, built at its first question."""

    def __init__(self, job: ExpertJob, base: bytes) -> None:
        self.job, self.base = job, base
        self._expert: Any = None
        self._dir = tempfile.TemporaryDirectory(prefix="plait-expert-")

    async def ask(self, asker: str, question: str, key: str) -> Answer:
        if self._expert is None:
            self._expert = self._build()
        answer: Answer = await self._expert.ask(asker, question, key)
        return answer

    def _build(self) -> Any:
        from plait.coord.experts import Expert
        from plait.events.backends import open_event_store
        from plait.events.runlog import RunLog
        from plait.models.registry import make_model
        from plait.settings import Settings
        from plait.workspace.bundles import clone_from_bundle

        job, s = self.job, Settings.model_validate(self.job.settings)
        root = clone_from_bundle(Path(self._dir.name) / "repo", self.base)
        model = make_model(job.model, s)
        return Expert.from_settings(
            ExpertSpec.model_validate(job.spec),
            s,
            log=RunLog(open_event_store(job.store, Path(), scope=job.scope), job.run_id),
            model=model,
            root=root,
            commit=job.commit,
            origin=job.origin,  # type: ignore[arg-type]
            repo_map=job.repo_map,
        )


class ActorExperts(Experts):
    """The run's experts as an agent anywhere on the cluster sees them: asked through their actors."""

    def __init__(self, run_id: str, specs: list[ExpertSpec]) -> None:
        super().__init__()
        self.run_id, self.specs = run_id, {s.name: s for s in specs}

    def __contains__(self, name: object) -> bool:
        return name in self.specs

    def __len__(self) -> int:
        return len(self.specs)

    def names(self) -> list[str]:
        return list(self.specs)

    def roster(self) -> str:
        return roster(list(self.specs.values()))

    async def ask(self, asker: str, name: str, question: str, key: str = "") -> Answer | None:
        if name not in self.specs:
            return None
        import ray

        actor = ray.get_actor(actor_name(self.run_id, name), namespace=NAMESPACE)
        answer: Answer = await actor.ask.remote(asker, question, key)
        return answer

    async def close(self) -> None:
        """Nothing to stop here: the actors belong to the driver, which ends them with the run."""
