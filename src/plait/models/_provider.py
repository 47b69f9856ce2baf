"""What the two SDK-backed providers share: their settings, their name, and one TLS context per model."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from typing import TypeVar

import httpx2

from plait.models._retry import Sleep, Transient, with_retries
from plait.models.base import RetryHook

T = TypeVar("T")

__all__ = ["ProviderBase"]


class ProviderBase:
    """A model behind an HTTP API: a fresh SDK client per call, so no connection outlives its event loop."""

    def __init__(
        self,
        name: str,
        model_id: str,
        *,
        api_key: str,
        base_url: str,
        timeout: float = 600.0,
        max_retries: int = 6,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._name = name
        self.model_id = model_id
        self.base_url = base_url
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._sleep = sleep
        self._ssl: ssl.SSLContext | None = None

    @property
    def name(self) -> str:
        return self._name

    def _tls(self) -> ssl.SSLContext:
        """The TLS context, made once: building one reads the system's certificates."""
        if self._ssl is None:
            self._ssl = httpx2.create_ssl_context()
        return self._ssl

    def _classify(self, exc: Exception) -> Transient | None:
        """Whether `exc` is worth another try (and how long to wait); each provider knows its SDK's errors."""
        raise NotImplementedError

    async def _retrying(self, once: Callable[[], Awaitable[T]], on_retry: RetryHook | None) -> T:
        """`once()`, retried on what `_classify` calls transient, as the settings allow."""
        return await with_retries(
            once,
            classify=self._classify,
            max_retries=self._max_retries,
            label=self._name,
            on_retry=on_retry,
            sleep=self._sleep,
        )
