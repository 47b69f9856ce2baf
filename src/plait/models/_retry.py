"""The one retry loop of the providers: what is transient, how long to wait, and when to give up.

Retried: HTTP 408, 409, 429 and 5xx, timeouts and connection errors. Everything else
(400, 401, 403, 404, 413, 422, ...) aborts at once: asking again cannot help. A server's
`x-should-retry` header (`true` or `false`, as the official SDKs honour it) overrides the status.

A call gives up when its retries run out, or when the next wait would take it past its retry budget
(seconds from the start of the call): a server asking for a longer wait than is left stops it at once.
The first attempt gets its full request timeout; a retry is cut off when the budget runs out.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from plait.errors import ModelError
from plait.messages import RetryHook

__all__ = [
    "ABORT_STATUSES",
    "RETRY_BUDGET",
    "RETRY_STATUSES",
    "Sleep",
    "Transient",
    "backoff",
    "duration",
    "retry_after",
    "status_transient",
    "with_retries",
]

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

RETRY_STATUSES = frozenset({408, 409, 429})
"""Retried, as is every status of 500 and above."""
ABORT_STATUSES = frozenset({400, 401, 402, 403, 404, 405, 413, 422})
"""Never retried (unless the server says `x-should-retry: true`); nor is any other status below 500."""

BASE_DELAY = 1.0
MAX_DELAY = 60.0
RETRY_BUDGET = 600.0
"""Seconds a call may spend, attempts and waits together, before it stops retrying."""


@dataclass(frozen=True)
class Transient:
    """A failure worth retrying: why, how long the server asked us to wait, and at most how many retries it gets."""

    reason: str
    retry_after: float | None = None
    limit: int | None = None


def duration(seconds: float) -> str:
    """Seconds for a person: `0.5 s`, `45 s`, `10 min`, `28 h`."""
    if seconds < 10:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked to wait, from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def status_transient(status: int, headers: Mapping[str, str], message: str) -> Transient | None:
    """A `Transient` for a retryable HTTP status, None for one that aborts; `x-should-retry` decides first."""
    should = {k.lower(): v for k, v in headers.items()}.get("x-should-retry", "").strip().lower()
    if should == "false":
        return None
    if should != "true" and (status in ABORT_STATUSES or (status < 500 and status not in RETRY_STATUSES)):
        return None
    labels = {408: "request timeout", 409: "conflict", 429: "rate limited"}
    label = labels.get(status, "server error" if status >= 500 else "error")
    reason = f"{label} ({status})" + (f": {message}" if message else "")
    return Transient(reason, retry_after(headers))


def backoff(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff with jitter: about 1, 2, 4 ... seconds, at most `MAX_DELAY`."""
    delay = min(BASE_DELAY * 2.0 ** (attempt - 1), MAX_DELAY)
    return delay * (0.5 + rand() / 2)


def _retries(count: int) -> str:
    return f"{count} {'retry' if count == 1 else 'retries'}"


def _give_up(transient: Transient, retried: int, max_retries: int, wait: float, spent: float, budget: float) -> str:
    """Why the call stops instead of waiting `wait` seconds for another try; empty when it need not."""
    limit = max_retries if transient.limit is None else min(max_retries, transient.limit)
    if retried >= limit:
        return f" after {_retries(retried)}: {transient.reason}" if retried else f": {transient.reason}"
    if spent + wait <= budget:
        return ""
    if transient.retry_after is not None:
        left = duration(max(budget - spent, 0.0))
        asked = f"the server asked to wait {duration(wait)}, longer than the {left} left of retry_budget"
        return f": {transient.reason}; {asked}: giving up"
    tries = f"{retried + 1} {'try' if retried == 0 else 'tries'}"
    return f": {transient.reason}; gave up after {tries} in {duration(spent)} (retry_budget is {duration(budget)})"


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[Exception], Transient | None],
    max_retries: int,
    label: str,
    budget: float = RETRY_BUDGET,
    on_retry: RetryHook | None = None,
    sleep: Sleep = asyncio.sleep,
) -> T:
    """Await `call()`, retrying what `classify` calls transient, up to `max_retries` times within `budget` seconds.

    Args:
        call: Makes one attempt; called afresh for each.
        classify: Returns a `Transient` for a failure worth retrying, None to let it propagate.
        max_retries: Retries after the first attempt.
        label: Names the model in the error raised when retrying stops.
        budget: Seconds the call may take, attempts and waits together; a retry is cut off when they run out.
        on_retry: Told (attempt, seconds to wait, reason) before each wait.
        sleep: Waits; tests pass a fake (its waits count against the budget as real ones would).

    Raises:
        ModelError: The last failure was transient and no retry was left, or the budget would not allow one.
    """
    retried, spent, last = 0, 0.0, ""
    while True:
        started = time.monotonic()
        deadline = asyncio.timeout(None if retried == 0 else budget - spent)
        try:
            async with deadline:
                return await call()
        except Exception as exc:
            spent += time.monotonic() - started
            if deadline.expired():
                raise ModelError(
                    f"{label} failed: no reply within the retry budget ({duration(budget)}) after "
                    f"{_retries(retried)}; the last failure: {last}"
                ) from exc
            transient = classify(exc)
            if transient is None:
                raise
            wait = transient.retry_after if transient.retry_after is not None else backoff(retried + 1)
            why = _give_up(transient, retried, max_retries, wait, spent, budget)
            if why:
                raise ModelError(f"{label} failed{why}") from exc
        retried, last = retried + 1, transient.reason
        if on_retry is not None:
            on_retry(retried, wait, transient.reason)
        await sleep(wait)
        spent += wait
