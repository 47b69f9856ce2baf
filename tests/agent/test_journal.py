from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.agent.journal import ModelCallJournal
from plait.errors import ModelError, ScriptError, StateError
from plait.events import ModelCallFailed, ModelCallFinished, ModelCallStarted, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, Usage, UserMessage
from plait.models import PriceTable, ScriptedModel
from plait.models.pricing import Price


def _request(text: str) -> ModelRequest:
    return ModelRequest(system="sys", messages=(UserMessage(text=text),))


def test_a_call_is_logged_before_and_after_and_priced(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    prices = PriceTable({"scripted:inline": Price(input=1_000_000.0, output=2_000_000.0)})
    model = ScriptedModel([{"text": "hello", "usage": {"input_tokens": 3, "output_tokens": 2}}])
    journal = ModelCallJournal(RunLog(store, "r"), "a", prices)

    response, cost = asyncio.run(journal.complete(model, _request("hi")))

    assert response.text == "hello" and cost == pytest.approx(3.0 + 4.0)
    kinds = [e.kind for e in store.events("r")]
    assert kinds == ["model_request", "model_response"]
    started, finished = store.events("r")
    assert isinstance(started, ModelCallStarted) and isinstance(finished, ModelCallFinished)
    assert started.req_hash == finished.req_hash == _request("hi").fingerprint()


def test_a_replay_reads_answered_calls_back_without_asking_the_model(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    first = ScriptedModel([{"text": "one"}, {"text": "two"}])
    journal = ModelCallJournal(RunLog(store, "r"), "a", PriceTable())
    asyncio.run(journal.complete(first, _request("q1")))
    asyncio.run(journal.complete(first, _request("q2")))

    fresh = ScriptedModel([{"text": "three"}])
    replay = ModelCallJournal(RunLog(store, "r"), "a", PriceTable())
    assert asyncio.run(replay.complete(fresh, _request("q1")))[0].text == "one"
    assert asyncio.run(replay.complete(fresh, _request("q2")))[0].text == "two"
    assert fresh.calls == []
    assert asyncio.run(replay.complete(fresh, _request("q3")))[0].text == "three"
    assert replay.replayed == 2 and len(fresh.calls) == 1


def test_a_replay_that_asks_something_else_is_reported(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    asyncio.run(
        ModelCallJournal(RunLog(store, "r"), "a", PriceTable()).complete(ScriptedModel([{"text": "x"}]), _request("q1"))
    )
    replay = ModelCallJournal(RunLog(store, "r"), "a", PriceTable())
    with pytest.raises(StateError, match="asks something else at model call 1"):
        asyncio.run(replay.complete(ScriptedModel([]), _request("changed")))


def test_a_failed_call_is_logged(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    journal = ModelCallJournal(RunLog(store, "r"), "a", PriceTable())
    with pytest.raises(ModelError):
        asyncio.run(journal.complete(ScriptedModel([]), _request("q")))
    failed = store.events("r", kinds=["model_error"])
    assert len(failed) == 1 and isinstance(failed[0], ModelCallFailed)
    assert ScriptError.__name__ not in failed[0].error and "call 1 has none" in failed[0].error
    assert Usage() == Usage(input_tokens=0)


def test_the_chained_fingerprint_equals_a_fresh_one_and_sees_any_change() -> None:
    from plait.messages import AssistantMessage, MessageChain

    chain = MessageChain()
    messages: list[UserMessage | AssistantMessage] = [UserMessage(text="q")]
    for i in range(5):
        request = ModelRequest(system="s", messages=tuple(messages))
        assert request.fingerprint(chain) == request.fingerprint()
        messages += [AssistantMessage(text=f"a{i}"), UserMessage(text=f"q{i}")]
    edited = ModelRequest(system="s", messages=(UserMessage(text="changed"), *messages[1:]))
    assert (
        edited.fingerprint(chain)
        == edited.fingerprint()
        != ModelRequest(system="s", messages=tuple(messages)).fingerprint()
    )
