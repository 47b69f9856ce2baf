"""A run killed after its triage chose (while the planner worked, say) gets the choice back on resume without
asking, and paying, the model again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel, PriceTable
from plait.plan.triage import Triage, triage


def _choosing(*calls: dict[str, str]) -> FunctionModel:
    def answer(request: ModelRequest) -> ModelResponse:
        turn = sum(1 for m in request.messages if m.kind == "assistant")
        return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "choose_mode", calls[turn]),))

    return FunctionModel(answer)


def _never(request: ModelRequest) -> ModelResponse:
    raise AssertionError("the model was asked again")


def _ask(path: Path, model: FunctionModel) -> tuple[Triage, int]:
    store = SQLiteEventStore(path)
    try:
        log = RunLog(store, "r")
        chosen = asyncio.run(triage("Split the engines", files=["a.py"], model=model, log=log, prices=PriceTable()))
        return chosen, len(log.events(agent="triage", kinds=["model_response"]))
    finally:
        store.close()


@pytest.mark.parametrize("mode", ["single", "parallel"])
def test_a_resumed_triage_reads_its_choice_back_and_pays_nothing(tmp_path: Path, mode: str) -> None:
    first = _ask(tmp_path / "e.db", _choosing({"mode": mode, "reason": "four  engines"}))
    again = _ask(tmp_path / "e.db", FunctionModel(_never))
    assert first == again == (Triage(mode, "four engines"), 1)


def test_a_refused_choice_is_not_read_back_as_the_choice(tmp_path: Path) -> None:
    bad, good = {"mode": "both", "reason": "?"}, {"mode": "single", "reason": "one file"}
    first = _ask(tmp_path / "e.db", _choosing(bad, good))
    again = _ask(tmp_path / "e.db", FunctionModel(_never))
    assert first == again == (Triage("single", "one file"), 2)
