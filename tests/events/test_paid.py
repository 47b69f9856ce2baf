"""What a run's agents paid for their answered calls is summed by the store's own query, in SQLite and in PostgreSQL,
under the stores that wrap it too: the sums a decode of every answer gives, without decoding one."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from store_logs import Log

from plait.events.runlog import RunLog
from plait.events.store import EventStore, ObservedStore, RedactingStore
from plait.events.types import Event, ModelCallFinished, ModelCallStarted
from plait.messages import ModelResponse, Usage


def _answer(agent: str, call: int, usage: Usage, usd: float) -> ModelCallFinished:
    response = ModelResponse(text=f"call {call}", usage=usage)
    return ModelCallFinished(run_id="r1", agent=agent, call=call, req_hash="h", response=response, cost_usd=usd)


class _Decoding:
    """A store with no query of its own for sums (as the tests' own stores): its reads are counted."""

    def __init__(self, inner: EventStore) -> None:
        self._inner = inner
        self.read: list[Event] = []

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        found = self._inner.events(run_id, agent=agent, kinds=kinds, after=after)
        self.read += found
        return found


def test_what_each_agent_paid_is_summed_by_the_query(log: Log) -> None:
    store = log.open()
    store.append(ModelCallStarted(run_id="r1", agent="a", call=1, req_hash="h", model="m", messages=1))
    store.append(_answer("a", 1, Usage(input_tokens=100, output_tokens=7, cached_tokens=40), 0.25))
    store.append(_answer("b", 1, Usage(input_tokens=5, cache_write_tokens=3), 0.125))
    store.append(_answer("a", 2, Usage(input_tokens=11, output_tokens=2), 0.5))
    store.append(_answer("", 1, Usage(input_tokens=1), 0.0))
    store.append(ModelCallFinished.model_validate({**_answer("c", 1, Usage(), 0).model_dump(), "run_id": "r2"}))
    wrapped = ObservedStore(RedactingStore(store, lambda text: text))
    paid = RunLog(wrapped, "r1").paid()
    assert paid == {
        "a": (Usage(input_tokens=111, output_tokens=9, cached_tokens=40), pytest.approx(0.75)),
        "b": (Usage(input_tokens=5, cache_write_tokens=3), pytest.approx(0.125)),
        "": (Usage(input_tokens=1), 0.0),
    }
    decoding = _Decoding(store)
    assert RunLog(decoding, "r1").paid() == paid  # type: ignore[arg-type]  # read, for a store that cannot sum
    assert len(decoding.read) == 4
    assert RunLog(store, "r2").paid() == {"c": (Usage(), 0.0)} and RunLog(store, "r3").paid() == {}
    store.close()
