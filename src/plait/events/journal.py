"""Record and replay of model calls: the call is logged before it is sent, its answer after.

On a replay (a resumed agent) an answered call is read back from the log instead of being
paid for again; a request that no longer matches the logged one is reported, never mixed in.
"""

from __future__ import annotations

import time

from plait.errors import StateError
from plait.events.store import EventStore
from plait.events.types import ModelCallFailed, ModelCallFinished, ModelCallRetried, ModelCallStarted
from plait.models.base import MessageChain, Model, ModelRequest, ModelResponse
from plait.models.pricing import PriceTable

__all__ = ["Journal"]


class Journal:
    """The model calls of one agent, numbered from 1 in the order the agent makes them."""

    def __init__(self, store: EventStore, run_id: str, agent: str, prices: PriceTable, attempt: int = 1) -> None:
        self._store = store
        self._run_id = run_id
        self._agent = agent
        self._prices = prices
        self._attempt = attempt
        self._recorded: dict[int, ModelCallFinished] = {}
        for event in store.events(run_id, agent=agent, kinds=["model_response"]):
            assert isinstance(event, ModelCallFinished)
            if event.attempt == attempt:
                self._recorded[event.call] = event
        self.calls = 0
        self._chain = MessageChain()
        self.replayed = 0
        self.last_replayed = False
        """Whether the latest call was read back from the log (it was paid, and charged, before)."""

    def answered(self, call: int) -> bool:
        """Whether model call `call` of this attempt was answered in an earlier process (it is read back)."""
        return call in self._recorded

    async def complete(self, model: Model, request: ModelRequest) -> tuple[ModelResponse, float]:
        """Answer the agent's next call, from the log when it was answered before; returns (response, cost)."""
        self.calls += 1
        call, digest = self.calls, request.fingerprint(self._chain)
        recorded = self._recorded.get(call)
        if recorded is not None:
            if recorded.req_hash != digest:
                raise StateError(
                    f"agent {self._agent} of run {self._run_id} asks something else at model call {call} than "
                    "the log recorded (the code or the prompt changed): start a new run instead of resuming"
                )
            self.replayed += 1
            self.last_replayed = True
            return recorded.response, recorded.cost_usd
        self.last_replayed = False
        base = {"run_id": self._run_id, "agent": self._agent, "call": call, "attempt": self._attempt}
        self._store.append(ModelCallStarted(**base, req_hash=digest, model=model.name, messages=len(request.messages)))

        def on_retry(attempt: int, wait: float, reason: str) -> None:
            self._store.append(
                ModelCallRetried(
                    run_id=self._run_id, agent=self._agent, call=call, attempt=attempt, wait_s=wait, reason=reason
                )
            )

        started = time.monotonic()
        try:
            response = await model.complete(request, on_retry=on_retry)
        except Exception as exc:
            self._store.append(ModelCallFailed(**base, error=str(exc)))
            raise
        cost = self._prices.cost(model.name, response.usage)
        self._store.append(
            ModelCallFinished(
                **base, req_hash=digest, response=response, cost_usd=cost, duration_s=time.monotonic() - started
            )
        )
        return response, cost
