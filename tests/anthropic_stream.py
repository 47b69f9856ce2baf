"""A local Anthropic Messages server that streams, as Claude Code asks its model (`stream: true`, server-sent events).

    with StreamServer(reply) as server:      # reply(body) -> a neutral reply, as in wire_server.py
        subprocess.run(["claude", "-p", ...], env={"ANTHROPIC_BASE_URL": server.url, ...})
    server.requests                          # every request body, in order

A streamed reply is the events the API sends: message_start, for each block content_block_start, its deltas
(text_delta, input_json_delta) and content_block_stop, then message_delta (stop reason, usage) and message_stop.
`/v1/messages/count_tokens` answers an estimate; any other path gets a 404 in the API's error shape.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from wire_server import Reply, anthropic_body

__all__ = ["StreamServer", "sse_events"]


def sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The streamed events of a complete Messages response."""
    usage = message["usage"]
    yield "message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {**block, "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": usage["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
            return
        if not path.endswith("/messages"):
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"no {path}"}})
            return
        with self.server.lock:
            self.server.requests.append(body)
            number = len(self.server.requests)
        message = anthropic_body(self.server.reply(body), str(body.get("model", "")), number)
        if not body.get("stream"):
            self._json(200, message)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for event, data in sse_events(message):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:
        self._json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, reply: Callable[[dict[str, Any]], Reply]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()


class StreamServer:
    """Anthropic Messages on 127.0.0.1 (a free port), each request answered by `reply(body)`."""

    def __init__(self, reply: Callable[[dict[str, Any]], Reply]) -> None:
        self._server = _Server(reply)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> StreamServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.requests)
