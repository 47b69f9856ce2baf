"""The retry loop: what is transient, how long it waits, and how it gives up."""

from __future__ import annotations

import asyncio
import email.utils

import pytest

from plait.errors import ModelError
from plait.models._retry import (
    ABORT_STATUSES,
    MAX_DELAY,
    Transient,
    backoff,
    duration,
    retry_after,
    status_transient,
    with_retries,
)


class Flaky(Exception):
    pass


class Fatal(Exception):
    pass


def _classify(exc: Exception) -> Transient | None:
    if not isinstance(exc, Flaky):
        return None
    return Transient(str(exc), getattr(exc, "wait", None), getattr(exc, "limit", None))


def _run(
    outcomes: list[Exception | str], max_retries: int = 3, budget: float = 600.0
) -> tuple[str, list[float], list[int]]:
    """Run `with_retries` over scripted outcomes; return the result, the waits and the attempts reported."""
    waits: list[float] = []
    attempts: list[int] = []
    remaining = list(outcomes)

    async def call() -> str:
        outcome = remaining.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    result = asyncio.run(
        with_retries(
            call,
            classify=_classify,
            max_retries=max_retries,
            label="test:model",
            budget=budget,
            on_retry=lambda attempt, wait, reason: attempts.append(attempt),
            sleep=sleep,
        )
    )
    return result, waits, attempts


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "100", "retry-after": "9"}, 0.1),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after-ms": "x", "retry-after": "2"}, 2.0),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after(headers) == expected


def test_retry_after_http_date() -> None:
    now = 1_800_000_000.0
    assert retry_after({"Retry-After": email.utils.formatdate(now + 30, usegmt=True)}, now=now) == 30.0
    assert retry_after({"Retry-After": email.utils.formatdate(now - 30, usegmt=True)}, now=now) == 0.0


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_transient_statuses(status: int) -> None:
    transient = status_transient(status, {"retry-after-ms": "5"}, "why")
    assert transient is not None
    assert transient.retry_after == 0.005
    assert f"({status}): why" in transient.reason


@pytest.mark.parametrize("status", sorted(ABORT_STATUSES | {418, 451}))
def test_aborting_statuses(status: int) -> None:
    assert status_transient(status, {}, "why") is None


def test_backoff_grows_with_jitter_up_to_the_cap() -> None:
    assert backoff(1, rand=lambda: 0.0) == 0.5
    assert backoff(1, rand=lambda: 1.0) == 1.0
    assert backoff(3, rand=lambda: 1.0) == 4.0
    assert backoff(30, rand=lambda: 1.0) == MAX_DELAY
    assert MAX_DELAY / 2 <= backoff(30) <= MAX_DELAY


def test_retries_then_succeeds() -> None:
    result, waits, attempts = _run([Flaky("a"), Flaky("b"), "ok"])
    assert result == "ok"
    assert attempts == [1, 2]
    assert 0.5 <= waits[0] <= 1.0
    assert 1.0 <= waits[1] <= 2.0


def _flaky(reason: str, wait: float | None = None, limit: int | None = None) -> Flaky:
    flaky = Flaky(reason)
    flaky.wait, flaky.limit = wait, limit  # type: ignore[attr-defined]
    return flaky


def test_server_wait_is_honoured_within_the_budget() -> None:
    _, waits, _ = _run([_flaky("short", 0.01), _flaky("long", 500.0), "ok"])
    assert waits == [0.01, 500.0]


def test_a_server_wait_past_the_budget_stops_at_once() -> None:
    with pytest.raises(ModelError, match=r"^test:model failed: long; the server asked to wait 2 h, longer than the "):
        _run([_flaky("short", 100.0), _flaky("long", 7200.0), "ok"])


def test_waits_stop_at_the_budget() -> None:
    # The first backoff is at least half a second.
    with pytest.raises(
        ModelError, match=r"^test:model failed: a; gave up after 1 try in 0 s \(retry_budget is 0\.4 s\)$"
    ):
        _run([_flaky("a"), "ok"], budget=0.4)


def test_a_failure_with_a_limit_is_retried_at_most_that_often() -> None:
    with pytest.raises(ModelError, match=r"^test:model failed after 1 retry: b$"):
        _run([_flaky("a", limit=1), _flaky("b", limit=1), "ok"], max_retries=6)


def test_a_retry_that_outlasts_the_budget_is_cut_off() -> None:
    async def call() -> str:
        if not calls:
            calls.append(1)
            raise _flaky("busy", 0.0)
        await asyncio.Event().wait()  # never answers
        return "never"

    calls: list[int] = []
    with pytest.raises(ModelError, match=r"^t failed: no reply within the retry budget \(0\.1 s\) after 1 retry; "):
        asyncio.run(with_retries(call, classify=_classify, max_retries=3, label="t", budget=0.1))


@pytest.mark.parametrize(
    ("status", "should", "retried"),
    [(503, "false", False), (429, "False", False), (400, "true", True), (401, "true", True), (500, "maybe", True)],
)
def test_x_should_retry_overrides_the_status(status: int, should: str, retried: bool) -> None:
    assert (status_transient(status, {"X-Should-Retry": should}, "m") is not None) is retried


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.25, "0.2 s"), (1.0, "1 s"), (45.2, "45 s"), (600, "10 min"), (100_000, "28 h")]
)
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_abort_propagates_unchanged_without_waiting() -> None:
    with pytest.raises(Fatal, match="no"):
        _run([Fatal("no"), "ok"])


def test_exhausted_retries_raise_a_model_error() -> None:
    with pytest.raises(ModelError, match=r"^test:model failed after 2 retries: c$") as caught:
        _run([Flaky("a"), Flaky("b"), Flaky("c")], max_retries=2)
    assert isinstance(caught.value.__cause__, Flaky)


def test_no_retries_allowed() -> None:
    with pytest.raises(ModelError, match=r"^test:model failed: a$"):
        _run([Flaky("a"), "ok"], max_retries=0)
