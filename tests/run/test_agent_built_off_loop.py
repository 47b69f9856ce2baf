"""An attempt's agent is built off the event loop that every agent of the run works on: building it reads the
environment for secrets and PATH for tools, and looks up the model's context window by its name."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from integrators import MergeTreeIntegrator

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo


class NamedModel(ScriptedModel):
    """A scripted model that notes the threads its name is read on."""

    def __init__(self, **script: Any) -> None:
        self.read_on: set[int] = set()
        super().__init__(**script)

    @property
    def name(self) -> str:
        self.read_on.add(threading.get_ident())
        return "scripted"


def test_an_attempts_agent_is_built_off_the_event_loop(repo: Repo, tmp_path: Path) -> None:
    finish = {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}
    model = NamedModel(conversations=[{"match": "Your task is `alpha`", "turns": [finish]}])
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(repo.head(), "main")
    task = PlanTask(id="alpha", title="alpha", instructions="Finish.", writes=["alpha.py"])
    ctx = PlanContext(
        repo=repo,
        settings=Settings(concurrency=1, max_attempts=1),
        model=model,
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
    )

    async def run() -> int:
        await run_plan(
            ctx, Plan(mode="parallel", reason="one", tasks=[task]), MergeTreeIntegrator(repo, "r1", base.commit)
        )
        return threading.get_ident()

    loop_thread = asyncio.run(run())
    assert model.read_on - {loop_thread}, "the agent was built on the event loop's thread"
    store.close()
