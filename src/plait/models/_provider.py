"""What the two SDK-backed providers share: their settings, their name, one TLS context per model, and the
transport faults every SDK reports alike.

Every call is streamed, so a long generation never runs into a timeout: connecting gets `CONNECT_TIMEOUT`
seconds (a server that is up accepts at once), and the request timeout bounds each wait for the next piece
of the reply (the first included), not the whole reply. A stream that breaks off is retried from the start.
Cancelling the call (Ctrl-C) closes its connection at once. A server that answers without streaming is read
as such. A refused connection to this machine means no server is running there: it fails at once; one to
another host is retried `REFUSED_RETRIES` times at most (a server restarting).

`post` sends a request without an SDK (the Chat Completions provider streams raw bytes and parses them
itself): importing an SDK and validating a long conversation against its types would cost more than the call's
own work. What it raises besides the transport's errors:

    Rejected      the server answered with an error status (its status, headers and error message)
    NoReply       no reply (its headers) came within the timeout
    NoConnection  the request could not be sent
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx2

from plait.errors import ModelError
from plait.messages import BadReplyBody, RetryHook
from plait.models._reply import read_json
from plait.models._retry import RETRY_BUDGET, Sleep, Transient, with_retries
from plait.models._stream import Stream, assemble

T = TypeVar("T")

__all__ = ["CONNECT_TIMEOUT", "REFUSED_RETRIES", "NoConnection", "NoReply", "ProviderBase", "Rejected", "local_url"]

CONNECT_TIMEOUT = 10.0
REFUSED_RETRIES = 2
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def local_url(url: str) -> bool:
    """Whether `url` names this machine: `localhost`, a loopback or unspecified address, or this host's name."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost") or host == socket.gethostname().lower():
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:  # the short forms the resolver accepts too, such as 127.1
            address = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            return False
    return address.is_loopback or address.is_unspecified


class RawResponse(Protocol):
    """What the SDKs' streaming responses share."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def read(self) -> bytes: ...

    def iter_bytes(self) -> AsyncIterator[bytes]: ...


class Rejected(Exception):
    """The server answered with an error status; `message` is its error's message, else its body's text."""

    def __init__(self, status: int, headers: Mapping[str, str], message: str, code: object = None) -> None:
        super().__init__(f"Error code: {status} - {message}")
        self.status, self.headers, self.message, self.code = status, headers, message, code

    @classmethod
    def read(cls, status: int, headers: Mapping[str, str], body: bytes) -> Rejected:
        """From an error reply's body: JSON whose `error` (or itself) holds a `message` and a `code`, or text."""
        text = body.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        error = data.get("error", data) if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        return cls(status, headers, str(message) if message else text, code)


class NoReply(Exception):
    """No reply came within the timeout (the connection was made)."""


class NoConnection(Exception):
    """The request could not be sent: its cause says why."""


class _Streamed:
    """An httpx2 response read as the SDKs' streaming responses are (see `RawResponse`)."""

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def read(self) -> bytes:
        return await self._response.aread()

    def iter_bytes(self) -> AsyncIterator[bytes]:
        return self._response.aiter_bytes()


async def _capped(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    """`chunks`, until more than `limit` bytes came: then `BadReplyBody`."""
    read = 0
    async for chunk in chunks:
        read += len(chunk)
        if read > limit:
            size = f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit:,} bytes"
            raise BadReplyBody(f"the reply is longer than {size}")
        yield chunk


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of type `kind` in the chain of causes and contexts of `exc`."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class ProviderBase:
    """A model behind an HTTP API: a fresh SDK client per call, so no connection outlives its event loop."""

    streams_text = True
    max_body = 256 << 20
    """Bytes of one reply read at most (a streamed one's events included): a server that sends more is
    answering something else, and an endless stream would hold the agent forever."""

    def __init__(
        self,
        name: str,
        model_id: str,
        *,
        api_key: str,
        base_url: str,
        timeout: float = 600.0,
        max_retries: int = 6,
        retry_budget: float = RETRY_BUDGET,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._name = name
        self.model_id = model_id
        self.base_url = base_url
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._retry_budget = retry_budget
        self._sleep = sleep
        self._ssl: ssl.SSLContext | None = None

    @property
    def name(self) -> str:
        return self._name

    def _tls(self) -> ssl.SSLContext:
        """The TLS context, made once: building one reads the bundle of certificates (a fifth of a second).

        A server reached over plain HTTP, with no proxy set, needs none: it gets a context that verifies
        against no certificate at all, so that TLS a redirect leads to fails rather than goes unchecked.
        """
        if self._ssl is None:
            proxied = any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_VARIABLES)
            plain = urlsplit(self.base_url).scheme == "http" and not proxied
            self._ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT) if plain else httpx2.create_ssl_context()
        return self._ssl

    def _timeouts(self) -> httpx2.Timeout:
        """The request timeout for the reply, at most `CONNECT_TIMEOUT` to connect."""
        return httpx2.Timeout(self._timeout, connect=min(CONNECT_TIMEOUT, self._timeout))

    @contextlib.asynccontextmanager
    async def post(self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> AsyncIterator[RawResponse]:
        """POST `body` as JSON to `path` under the base URL, on a client of this call alone; the reply streams.

        Raises:
            Rejected: The server answered with an error status.
            NoReply: No reply within the timeout.
            NoConnection: The request could not be sent (a connection refused is found in its cause).
        """
        base = httpx2.URL(self.base_url)
        url = base.copy_with(path=base.path.rstrip("/") + path)  # a query on the base URL stays after the path
        content = json.dumps(body).encode()
        sent = {"content-type": "application/json", "accept": "application/json", **headers}
        async with httpx2.AsyncClient(verify=self._tls(), timeout=self._timeouts(), follow_redirects=True) as client:
            request = client.build_request("POST", url, content=content, headers=sent)
            try:
                response = await client.send(request, stream=True)
            except httpx2.ConnectTimeout:
                raise
            except httpx2.TimeoutException as exc:
                raise NoReply(f"no reply from {self.base_url} within {self._timeout:g}s") from exc
            except httpx2.TransportError as exc:
                raise NoConnection(f"cannot connect to {self.base_url}") from exc
            try:
                if not response.is_success:
                    raise Rejected.read(response.status_code, response.headers, await response.aread())
                yield _Streamed(response)
            finally:
                await response.aclose()

    def _classify(self, exc: Exception) -> Transient | None:
        """Whether `exc` is worth another try (and how long to wait); each provider knows its SDK's errors."""
        raise NotImplementedError

    def _transport(self, exc: Exception) -> Transient | None:
        """`_classify`, after the faults of the connection itself, which every SDK wraps alike.

        Raises:
            ModelError: The connection was refused by this machine: no server is running there.
        """
        if _cause(exc, ConnectionRefusedError) is not None:
            if local_url(self.base_url):
                raise ModelError(f"{self._name}: nothing is listening at {self.base_url}: is the server running?")
            return Transient(f"{self.base_url} refused the connection", limit=REFUSED_RETRIES)
        if _cause(exc, httpx2.ConnectTimeout) is not None:
            connect = min(CONNECT_TIMEOUT, self._timeout)
            return Transient(f"cannot connect to {self.base_url} within {connect:g}s")
        if isinstance(exc, httpx2.TimeoutException):  # raised while streaming, where the SDKs do not wrap it
            return Transient(f"{self.base_url} sent nothing for {self._timeout:g}s")
        if isinstance(exc, httpx2.TransportError):
            return Transient(f"the connection to {self.base_url} broke off: {' '.join(str(exc).split())[:200]}")
        if isinstance(exc, NoReply | NoConnection):
            return Transient(str(exc))
        return self._classify(exc)

    async def _body(self, raw: RawResponse, stream: Stream, end: str) -> dict[str, Any]:
        """The reply body: assembled from its events, or read whole from a server that did not stream."""
        kind = raw.headers.get("content-type", "")
        chunks = _capped(raw.iter_bytes(), self.max_body)
        if "text/event-stream" not in kind.lower():
            return read_json(b"".join([chunk async for chunk in chunks]), kind)
        return await assemble(chunks, stream, end)

    async def _retrying(self, once: Callable[[], Awaitable[T]], on_retry: RetryHook | None) -> T:
        """`once()`, retried on what `_transport` calls transient, as the settings allow."""
        return await with_retries(
            once,
            classify=self._transport,
            max_retries=self._max_retries,
            label=self._name,
            budget=self._retry_budget,
            on_retry=on_retry,
            sleep=self._sleep,
        )
