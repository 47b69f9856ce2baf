"""How a run ends while it plans: a planning failure ends it for good, a stop by the user leaves it resumable."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.errors import ModelError, ScriptError
from plait.events import RunFinished, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse
from plait.models.scripted import FunctionModel
from plait.run.base import RunBase
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.state import load_state
from plait.settings import Settings
from plait.workspace import LocalShell, Repo


def _orchestration(repo: Repo, model: FunctionModel, store: SQLiteEventStore, split: str = "auto") -> Orchestration:
    return Orchestration(
        repo=repo,
        task="Split alpha and beta",
        settings=Settings(verify_command="true", split=split),
        model=model,
        log=RunLog(store, "r1"),
        base=RunBase(repo.head(), "main"),
        runners=lambda path, agent, env: LocalShell(),
    )


def _finished(store: SQLiteEventStore) -> RunFinished:
    (last,) = store.events("r1", kinds=["run_finished"])
    assert isinstance(last, RunFinished)
    return last


@pytest.mark.parametrize(
    ("split", "who"),
    [("always", "the planner's model failed"), ("auto", "the model failed while choosing the mode")],
)
def test_a_planner_whose_model_fails_ends_the_run_as_failed(repo: Repo, tmp_path: Path, split: str, who: str) -> None:
    def down(request: ModelRequest) -> ModelResponse:
        raise ScriptError("the provider is down")

    store = SQLiteEventStore(tmp_path / "events.db")
    with pytest.raises(ModelError, match="the provider is down"):
        asyncio.run(orchestrate(_orchestration(repo, FunctionModel(down), store, split)))
    finished = _finished(store)
    assert finished.status == "failed" and finished.reason.startswith(f"planning failed: {who}: ")
    assert not load_state(RunLog(store, "r1")).unfinished


def test_a_stop_while_planning_leaves_the_run_resumable(repo: Repo, tmp_path: Path) -> None:
    asked = asyncio.Event()

    async def slow(request: ModelRequest) -> ModelResponse:
        asked.set()
        await asyncio.Event().wait()  # never answers: the user stops the run first
        raise AssertionError("unreachable")

    async def stop_while_planning() -> None:
        work = asyncio.ensure_future(orchestrate(_orchestration(repo, FunctionModel(slow), store)))
        await asked.wait()
        work.cancel()
        with pytest.raises(asyncio.CancelledError):
            await work

    store = SQLiteEventStore(tmp_path / "events.db")
    asyncio.run(stop_while_planning())
    assert _finished(store).status == "interrupted"
    assert load_state(RunLog(store, "r1")).unfinished
