"""A local HTTP server that speaks the OpenAI Chat Completions, OpenAI Responses and Anthropic Messages wire formats.

Point a real SDK (or `plait run`) at it to test providers over real HTTP without a network:

    with WireServer([{"text": "hi"}, {"tool_calls": [{"name": "finish", "arguments": {}}]}]) as server:
        model = OpenAIModel("openai:m", "m", api_key="k", base_url=server.openai_url, ...)
        ...
    server.requests[0].body["messages"]   # what the SDK sent

Each reply is a neutral dict, rendered in the format of the endpoint that was called:

    {"text": "...", "tool_calls": [{"name": "f", "arguments": {...} or "raw json", "id": optional}],
     "usage": {"input_tokens": 10, "output_tokens": 5, "cached_tokens": 0, "cache_write_tokens": 0},
     "stop_reason": optional}
    {"status": 429, "message": "slow down", "headers": {"retry-after-ms": "10"}, "type": opt, "code": opt}
    {"raw": {...any JSON...}, "status": 200, "headers": {...}}     sent as is, for malformed replies
    {"body": b"<html>502</html>", "status": 200, "headers": {"content-type": "text/html"}}   bytes, not JSON

`input_tokens` counts every prompt token, cached or not, as plait's `Usage` does; the
Anthropic rendering splits it into fresh, cache-read and cache-write tokens. With a `PromptCache`
(tests/wire_cache.py), a reply without `usage` gets the usage the provider would report, cache reads
and writes included, and an Anthropic request with more than 4 cache breakpoints gets the API's 400.

A request with `stream: true` gets a rendered reply as server-sent events (tests/wire_stream.py), sent in
chunked encoding; a reply may say how: `"stream": False` answers with the JSON body all the same, `"cut": N`
breaks the connection after N events, `"gap": S` waits S seconds before each event, and `"hold": N` sends
N events, then waits (30 s at most) for the client to hang up, which `hangups` counts. A Responses reply may
carry `"reasoning": [{"encrypted_content": "..."}]`, items sent before the message.

Replies come from a queue (`push`) or from a callable `(format, request_body) -> reply`,
where format is "openai", "responses" or "anthropic". A request with nothing queued gets a 418 error
whose message says so, which no client retries.
"""

from __future__ import annotations

import json
import select
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from wire_cache import PromptCache
from wire_stream import EVENTS, responses_body, sse

__all__ = ["Recorded", "Reply", "ReplyFunction", "WireServer"]

Reply = Mapping[str, Any]
ReplyFunction = Callable[[str, dict[str, Any]], Reply]

_OPENAI_ERRORS = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_OPENAI_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    format: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class _State:
    replies: deque[Reply] = field(default_factory=deque)
    function: ReplyFunction | None = None
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cache: PromptCache | None = None
    hangups: int = 0


def _usage(reply: Reply) -> tuple[int, int, int, int]:
    usage = reply.get("usage") or {}
    return (
        int(usage.get("input_tokens", 10)),
        int(usage.get("output_tokens", 5)),
        int(usage.get("cached_tokens", 0)),
        int(usage.get("cache_write_tokens", 0)),
    )


def _arguments(call: Mapping[str, Any]) -> Any:
    return call.get("arguments", {})


def openai_body(reply: Reply, model: str, number: int) -> dict[str, Any]:
    """A Chat Completions response for a neutral reply."""
    calls = [
        {
            "id": call.get("id") or f"call_{number}_{i + 1}",
            "type": "function",
            "function": {"name": call["name"], "arguments": _as_text(_arguments(call))},
        }
        for i, call in enumerate(reply.get("tool_calls", []))
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("text") or None}
    if calls:
        message["tool_calls"] = calls
    inp, out, cached, written = _usage(reply)
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000 + number,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": reply.get("stop_reason") or ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": inp,
            "completion_tokens": out,
            "total_tokens": inp + out,
            "prompt_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        },
    }


def anthropic_body(reply: Reply, model: str, number: int) -> dict[str, Any]:
    """A Messages API response for a neutral reply."""
    content: list[dict[str, Any]] = []
    if reply.get("text"):
        content.append({"type": "text", "text": reply["text"]})
    for i, call in enumerate(reply.get("tool_calls", [])):
        args = _arguments(call)
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{number}_{i + 1}",
                "name": call["name"],
                "input": json.loads(args) if isinstance(args, str) else args,
            }
        )
    inp, out, cached, written = _usage(reply)
    has_calls = any(block["type"] == "tool_use" for block in content)
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.get("stop_reason") or ("tool_use" if has_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {
            "input_tokens": inp - cached - written,
            "output_tokens": out,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": written,
        },
    }


def error_body(fmt: str, reply: Reply) -> dict[str, Any]:
    """The provider's error JSON for an error reply."""
    status = int(reply["status"])
    message = str(reply.get("message", f"error {status}"))
    if fmt == "anthropic":
        kind = reply.get("type") or _ANTHROPIC_ERRORS.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    kind = reply.get("type") or _OPENAI_ERRORS.get(status, "server_error" if status >= 500 else "invalid_request_error")
    code = reply.get("code", _OPENAI_CODES.get(status))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _render(fmt: str, reply: Reply, model: str, number: int) -> tuple[int, dict[str, Any]]:
    """The status and JSON body for a reply; a reply that cannot be rendered becomes a 418 saying why."""
    try:
        if "raw" in reply:
            return int(reply.get("status", 200)), reply["raw"]
        if "status" in reply:
            return int(reply["status"]), error_body(fmt, reply)
        render = {"anthropic": anthropic_body, "responses": responses_body}.get(fmt, openai_body)
        return 200, render(reply, model, number)
    except (KeyError, TypeError, ValueError) as exc:
        return 418, error_body(fmt, {"status": 418, "message": f"wire server cannot render {reply!r}: {exc!r}"})


def _cached(cache: PromptCache, fmt: str, body: dict[str, Any], reply: Reply) -> Reply:
    """`reply` with the usage the provider would report for `body`, given what earlier requests cached."""
    if fmt == "responses":  # not modelled: its input items are not chat messages
        return reply
    if fmt == "anthropic":
        marks = json.dumps(body).count('"cache_control"')
        if marks > 4:
            return {
                "status": 400,
                "message": f"A maximum of 4 blocks with cache_control may be provided. Found {marks}.",
            }
        usage = cache.anthropic(body)
    else:
        usage = cache.openai(body)
    counted = {"input_tokens": usage.total, "cached_tokens": usage.read, "cache_write_tokens": usage.written}
    return {**reply, "usage": {**counted, "output_tokens": 5}}


def _as_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        body = json.loads(raw) if raw else {}
        path = self.path.rstrip("/")
        fmt = "anthropic" if path.endswith("/messages") else "responses" if path.endswith("/responses") else "openai"
        state = self.server.state
        with state.lock:
            state.requests.append(Recorded(fmt, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            number = len(state.requests)
            reply: Reply | None = state.replies.popleft() if state.replies else None
        if reply is None and state.function is not None:
            try:
                reply = state.function(fmt, body)
            except Exception as exc:  # a bug in a test's reply function must show, not hang the client
                reply = {"status": 418, "message": f"wire server reply function failed: {exc!r}"}
        if reply is None:
            reply = {"status": 418, "message": f"wire server has no reply queued for request {number}"}
        if state.cache is not None and not {"usage", "raw", "status", "body"} & set(reply):
            reply = _cached(state.cache, fmt, body, reply)
        if "body" in reply:
            data = reply["body"]
            self._send(int(reply.get("status", 200)), data if isinstance(data, bytes) else str(data).encode(), reply)
            return
        status, payload = _render(fmt, reply, str(body.get("model", "")), number)
        if body.get("stream") and status == 200 and "raw" not in reply and reply.get("stream", True):
            self._stream(fmt, payload, reply)
            return
        self._send(status, json.dumps(payload).encode(), reply)

    def _stream(self, fmt: str, payload: dict[str, Any], reply: Reply) -> None:
        """`payload` as server-sent events, one chunk each, cut, slowed or held as `reply` says."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        events = [sse(name, data) for name, data in EVENTS[fmt](payload)]
        if fmt == "openai":
            events.append(sse("", "[DONE]"))
        cut = int(reply.get("cut", len(events)))
        for number, event in enumerate(events[:cut], 1):
            time.sleep(float(reply.get("gap", 0)))
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
            if number == reply.get("hold"):
                self._await_hangup()
                return
        if cut < len(events):
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")

    def _await_hangup(self) -> None:
        """Wait for the client to close the connection (at most 30 s), and count it."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if select.select([self.connection], [], [], 0.05)[0] and not self.connection.recv(1):
                with self.server.state.lock:
                    self.server.state.hangups += 1
                break
        self.close_connection = True

    def _send(self, status: int, data: bytes, reply: Reply) -> None:
        headers: Mapping[str, str] = reply.get("headers", {})
        self.send_response(status)
        if not any(name.lower() == "content-type" for name in headers):
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: _State) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up (as one that timed out does); report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class WireServer:
    """Serves queued or computed replies on 127.0.0.1 and records every request; a context manager."""

    def __init__(self, replies: Iterable[Reply] | ReplyFunction = (), *, cache: PromptCache | None = None) -> None:
        self._state = _State(cache=cache)
        if callable(replies):
            self._state.function = replies
        else:
            self._state.replies.extend(replies)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> WireServer:
        self._server = _Server(self._state)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="wire-server", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    @property
    def url(self) -> str:
        """The root URL, `http://127.0.0.1:PORT`: the Anthropic base URL."""
        if self._server is None:
            raise RuntimeError("WireServer is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """The OpenAI base URL, `http://127.0.0.1:PORT/v1`."""
        return self.url + "/v1"

    def push(self, *replies: Reply) -> None:
        """Queue replies; they are served before the reply function, if any."""
        with self._state.lock:
            self._state.replies.extend(replies)

    @property
    def requests(self) -> list[Recorded]:
        """Every request received so far, in order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def hangups(self) -> int:
        """Held streams whose client hung up."""
        with self._state.lock:
            return self._state.hangups

    @property
    def pending(self) -> int:
        """Queued replies not yet served."""
        with self._state.lock:
            return len(self._state.replies)
