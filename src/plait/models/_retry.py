"""The one retry loop of the providers: what is transient, how long to wait, and when to give up.

Retried: HTTP 408, 409, 429 and 5xx, timeouts and connection errors. Everything else
(400, 401, 403, 404, 413, 422, ...) aborts at once: asking again cannot help.
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
from plait.models.base import RetryHook

__all__ = [
    "ABORT_STATUSES",
    "RETRY_STATUSES",
    "Sleep",
    "Transient",
    "backoff",
    "retry_after",
    "status_transient",
    "with_retries",
]

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

RETRY_STATUSES = frozenset({408, 409, 429})
"""Retried, as is every status of 500 and above."""
ABORT_STATUSES = frozenset({400, 401, 402, 403, 404, 405, 413, 422})
"""Never retried; any other status below 500 is not retried either."""

BASE_DELAY = 1.0
MAX_DELAY = 60.0
MAX_RETRY_AFTER = 300.0
"""A server may ask for a longer wait than the backoff cap, but not for more than this."""


@dataclass(frozen=True)
class Transient:
    """A failure worth retrying: why, and how long the server asked us to wait, if it did."""

    reason: str
    retry_after: float | None = None


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
    """A `Transient` for a retryable HTTP status, None for one that aborts."""
    if status in ABORT_STATUSES or (status < 500 and status not in RETRY_STATUSES):
        return None
    label = {408: "request timeout", 409: "conflict", 429: "rate limited"}.get(status, "server error")
    reason = f"{label} ({status})" + (f": {message}" if message else "")
    return Transient(reason, retry_after(headers))


def backoff(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff with jitter: about 1, 2, 4 ... seconds, at most `MAX_DELAY`."""
    delay = min(BASE_DELAY * 2.0 ** (attempt - 1), MAX_DELAY)
    return delay * (0.5 + rand() / 2)


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[Exception], Transient | None],
    max_retries: int,
    label: str,
    on_retry: RetryHook | None = None,
    sleep: Sleep = asyncio.sleep,
) -> T:
    """Await `call()`, retrying what `classify` calls transient, up to `max_retries` times.

    Args:
        call: Makes one attempt; called afresh for each.
        classify: Returns a `Transient` for a failure worth retrying, None to let it propagate.
        max_retries: Retries after the first attempt.
        label: Names the model in the error raised when retries run out.
        on_retry: Told (attempt, seconds to wait, reason) before each wait.
        sleep: Waits; tests pass a fake.

    Raises:
        ModelError: The last failure was transient and no retries were left.
    """
    attempt = 0
    while True:
        try:
            return await call()
        except Exception as exc:
            transient = classify(exc)
            if transient is None:
                raise
            if attempt >= max_retries:
                tried = f" after {max_retries} {'retry' if max_retries == 1 else 'retries'}" if max_retries else ""
                raise ModelError(f"{label} failed{tried}: {transient.reason}") from exc
        attempt += 1
        if transient.retry_after is not None:
            wait = min(transient.retry_after, MAX_RETRY_AFTER)
        else:
            wait = backoff(attempt)
        if on_retry is not None:
            on_retry(attempt, wait, transient.reason)
        await sleep(wait)
