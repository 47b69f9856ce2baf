"""A local OpenAI Responses API server that streams, as Codex asks its model (`stream: true`, server-sent events).

    with ResponsesServer(reply) as server:   # reply(body) -> {"text": ..., "tool_calls": [{"name", "arguments"}]}
        ... base_url = server.url ...
    server.requests                          # every request body, in order

Each reply is streamed as `response.created`, per output item `response.output_item.added` and `.done`, then
`response.completed` with usage; any other path gets a 404.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ResponsesServer"]

Reply = Callable[[dict[str, Any]], dict[str, Any]]


def _events(reply: dict[str, Any], number: int, model: str) -> list[tuple[str, dict[str, Any]]]:
    output: list[dict[str, Any]] = []
    if reply.get("text"):
        output.append(
            {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply["text"], "annotations": []}],
            }
        )
    for i, call in enumerate(reply.get("tool_calls", [])):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{number}_{i}",
                "call_id": f"call_{number}_{i}",
                "name": call["name"],
                "arguments": json.dumps(call["arguments"]),
                "status": "completed",
            }
        )
    usage = {
        "input_tokens": reply.get("input_tokens", 100),
        "output_tokens": reply.get("output_tokens", 10),
        "total_tokens": 0,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    response = {
        "id": f"resp_{number}",
        "object": "response",
        "status": "completed",
        "model": model,
        "output": output,
        "usage": usage,
    }
    seq = iter(range(10_000))
    events = [
        (
            "response.created",
            {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
        )
    ]
    for index, item in enumerate(output):
        events.append(
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item})
        )
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item})
        )
    events.append(("response.completed", {"type": "response.completed", "response": response}))
    return [(name, {**data, "sequence_number": next(seq)}) for name, data in events]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/responses"):
            self.send_response(404)
            self.end_headers()
            return
        with self.server.lock:
            self.server.requests.append(body)
            number = len(self.server.requests)
        events = _events(self.server.reply(body), number, str(body.get("model", "")))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": []}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, reply: Reply) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()


class ResponsesServer:
    """The OpenAI Responses API on 127.0.0.1 (a free port), each request answered by `reply(body)`."""

    def __init__(self, reply: Reply) -> None:
        self._server = _Server(reply)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.lock:
            return list(self._server.requests)
