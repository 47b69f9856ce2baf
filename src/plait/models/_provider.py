"""What the two SDK-backed providers share: their settings, their name, and one TLS context per model."""

from __future__ import annotations

import asyncio
import ssl

import httpx2

from plait.models._retry import Sleep

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
