"""The retry loop: what is transient, how long it waits, and how it gives up."""

from __future__ import annotations

import asyncio
import email.utils

import pytest

from plait.errors import ModelError
from plait.models._retry import (
    ABORT_STATUSES,
    MAX_DELAY,
    MAX_RETRY_AFTER,
    Transient,
    backoff,
    retry_after,
    status_transient,
    with_retries,
)


class Flaky(Exception):
    pass


class Fatal(Exception):
    pass


def _classify(exc: Exception) -> Transient | None:
    return Transient(str(exc), getattr(exc, "wait", None)) if isinstance(exc, Flaky) else None


def _run(outcomes: list[Exception | str], max_retries: int = 3) -> tuple[str, list[float], list[int]]:
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


def test_server_wait_is_honoured_and_capped() -> None:
    short, long = Flaky("short"), Flaky("long")
    short.wait, long.wait = 0.01, 10_000.0  # type: ignore[attr-defined]
    _, waits, _ = _run([short, long, "ok"])
    assert waits == [0.01, MAX_RETRY_AFTER]


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
