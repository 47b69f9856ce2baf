"""Hostile model replies, rendered for either wire format of `WireServer`, and the model that plays them.

A case is a list of replies given in turn, then a fallback given to every later request (a clean
`finish`, or the hostile reply again). Replies that the neutral form of `WireServer` cannot express
(a tool call whose arguments are not an object on the Anthropic wire, a body nested past what
`json.dumps` allows, odd `usage`) are built here as the exact bytes a server would send.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wire_server import Reply, anthropic_body, openai_body

Build = Callable[[str], Reply]
"""A reply for a wire format ("openai" or "anthropic")."""

BIG = 10 * 1024 * 1024


def finish(summary: str = "done") -> Reply:
    return {"tool_calls": [{"name": "finish", "arguments": {"summary": summary}}]}


def _const(reply: Reply) -> Build:
    return lambda fmt: reply


def _body(fmt: str, reply: Reply) -> dict[str, Any]:
    return (anthropic_body if fmt == "anthropic" else openai_body)(reply, "m", 1)


def _bytes(fmt: str, reply: Reply, patch: Callable[[dict[str, Any]], None], fill: str = "") -> Reply:
    """`reply` rendered, changed by `patch`, and sent as bytes; the string "@FILL@" becomes `fill`, raw."""
    body = _body(fmt, reply)
    patch(body)
    text = json.dumps(body).replace('"@FILL@"', fill)
    return {"body": text.encode(), "headers": {"content-type": "application/json"}}


def raw_call(name: str, arguments: str) -> Build:
    """A tool call whose arguments are the text `arguments`, as is (on the Anthropic wire, `input` is raw JSON)."""

    def build(fmt: str) -> Reply:
        call = {"tool_calls": [{"name": name, "arguments": {"x": "@FILL@"}}]}
        if fmt == "openai":
            return {"tool_calls": [{"name": name, "arguments": arguments}]}

        try:  # the Messages API sends `input` as JSON: raw when it is JSON, else as the string it is
            json.loads(arguments)
            fill = arguments
        except ValueError:
            fill = json.dumps(arguments)
        except RecursionError:
            fill = arguments

        def patch(body: dict[str, Any]) -> None:
            body["content"][0]["input"] = "@FILL@"

        return _bytes(fmt, call, patch, fill)

    return build


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_body(depth: int) -> Build:
    """A whole reply with an extra field nested `depth` deep."""

    def build(fmt: str) -> Reply:
        def patch(body: dict[str, Any]) -> None:
            body["extra"] = "@FILL@"

        return _bytes(fmt, finish(), patch, nested(depth))

    return build


def usage(value: Any) -> Build:
    """A clean `finish` whose `usage` is `value` (the string "MISSING" drops it)."""

    def build(fmt: str) -> Reply:
        def patch(body: dict[str, Any]) -> None:
            if value == "MISSING":
                del body["usage"]
            else:
                body["usage"] = value

        return _bytes(fmt, finish(), patch)

    return build


def stop(openai_reason: str, anthropic_reason: str, reply: Reply) -> Build:
    return lambda fmt: {**reply, "stop_reason": openai_reason if fmt == "openai" else anthropic_reason}


def refusal(fmt: str) -> Reply:
    if fmt == "anthropic":
        return {"text": "I can't help with that.", "stop_reason": "refusal"}

    def patch(body: dict[str, Any]) -> None:
        body["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "I can't help with that."}

    return _bytes(fmt, {"text": "x"}, patch)


def duplicate_ids(fmt: str) -> Reply:
    same = "toolu_same" if fmt == "anthropic" else "call_same"
    return {
        "tool_calls": [
            {"name": "read_file", "arguments": {"path": "greet.py"}, "id": same},
            {"name": "list_files", "arguments": {}, "id": same},
        ]
    }


SURROGATE = "\ud800"

# name -> (replies in turn, fallback)
CASES: dict[str, tuple[list[Build], Build]] = {
    "malformed-json-arguments": ([raw_call("write_file", '{"path": "x.py", "content": ')] * 2, _const(finish())),
    "arguments-not-an-object": ([raw_call("read_file", '["greet.py"]'), raw_call("finish", "42")], _const(finish())),
    "malformed-every-time": ([], raw_call("write_file", '{"path": ')),
    "unknown-tool": (
        [_const({"tool_calls": [{"name": "rm_everything", "arguments": {"now": True}}]})],
        _const(finish()),
    ),
    "wrong-types": (
        [
            _const({"tool_calls": [{"name": "write_file", "arguments": {"path": 123, "content": ["a"]}}]}),
            _const({"tool_calls": [{"name": "read_file", "arguments": {"path": {"x": 1}}}]}),
            _const({"tool_calls": [{"name": "finish", "arguments": {"summary": 5}}]}),
        ],
        _const(finish()),
    ),
    "unpaired-surrogates": (
        [
            _const(
                {
                    "text": f"look {SURROGATE}",
                    "tool_calls": [
                        {"name": "write_file", "arguments": {"path": f"s{SURROGATE}.py", "content": "x\udfff"}}
                    ],
                }
            ),
            _const({"tool_calls": [{"name": "run", "arguments": {"command": f"echo {SURROGATE}"}}]}),
        ],
        _const(finish(f"done {SURROGATE}")),
    ),
    "arguments-nested-500": (
        [raw_call("write_file", '{"path": "n.py", "content": ' + nested(500) + "}")],
        _const(finish()),
    ),
    "arguments-nested-1000": (
        [raw_call("write_file", '{"path": "n.py", "content": ' + nested(1000) + "}")],
        _const(finish()),
    ),
    "body-nested-500": ([deep_body(500)], _const(finish())),
    "body-nested-1000": ([deep_body(1000)], _const(finish())),
    "ten-mb-summary": ([], _const(finish("s" * BIG))),
    "one-mb-path": (
        [
            _const({"tool_calls": [{"name": "read_file", "arguments": {"path": "p" * 1024 * 1024}}]}),
            _const({"tool_calls": [{"name": "write_file", "arguments": {"path": "d/" * 512 * 1024, "content": "x"}}]}),
        ],
        _const(finish()),
    ),
    "long-path-under-the-cap": (
        [
            _const({"tool_calls": [{"name": "read_file", "arguments": {"path": "p" * 200_000}}]}),
            _const({"tool_calls": [{"name": "write_file", "arguments": {"path": "d/" * 100_000, "content": "x"}}]}),
            _const({"tool_calls": [{"name": "edit_file", "arguments": {"path": "e" * 5000, "old": "a", "new": "b"}}]}),
        ],
        _const(finish()),
    ),
    "arguments-nested-100000": (
        [raw_call("write_file", '{"path": "n.py", "content": ' + nested(100_000) + "}")],
        _const(finish()),
    ),
    "ten-mb-text": ([_const({"text": "t" * BIG, **finish()})], _const(finish())),
    "odd-names-and-ids": (
        [
            _const(
                {
                    "tool_calls": [
                        {
                            "name": f"read{SURROGATE}_file" + "n" * 100_000,
                            "arguments": {},
                            "id": f"c{SURROGATE}" * 9000,
                        },
                        {"name": "", "arguments": {}, "id": ""},
                    ]
                }
            )
        ],
        _const(finish()),
    ),
    "duplicate-call-ids": ([duplicate_ids], _const(finish())),
    "html-body": ([_const({"body": b"<html>502</html>", "headers": {"content-type": "text/html"}})], _const(finish())),
    "json-array-body": ([_const({"raw": []})], _const(finish())),
    "invalid-utf8-body": (
        [_const({"body": b'{"id": "\xff\xfe\xfd', "headers": {"content-type": "application/json"}})],
        _const(finish()),
    ),
    "no-choices-or-content": (
        [lambda fmt: {"raw": {"choices": []} if fmt == "openai" else {"type": "message", "content": []}}],
        _const(finish()),
    ),
    "error-in-a-200": ([_const({"raw": {"error": {"message": "upstream overloaded"}}})], _const(finish())),
    "html-every-time": ([], _const({"body": b"<html>502</html>", "headers": {"content-type": "text/html"}})),
    "usage-empty": ([], usage({})),
    "usage-strings": (
        [],
        usage({"prompt_tokens": "ten", "completion_tokens": "5", "input_tokens": "ten", "output_tokens": "5"}),
    ),
    "usage-negative": (
        [],
        usage(
            {
                "prompt_tokens": -10,
                "completion_tokens": -5,
                "total_tokens": -15,
                "input_tokens": -10,
                "output_tokens": -5,
            }
        ),
    ),
    "usage-missing": ([], usage("MISSING")),
    "usage-a-string": ([], usage("lots")),
    "cut-at-max-tokens": ([stop("length", "max_tokens", {"text": "I will now write the"})], _const(finish())),
    "cut-call-at-max-tokens": (
        [
            lambda fmt: (
                {**raw_call("write_file", '{"path": "x.py", "con')(fmt), "stop_reason": "length"}
                if fmt == "openai"
                else {"text": "writing", "stop_reason": "max_tokens"}
            )
        ],
        _const(finish()),
    ),
    "cut-every-time": ([], stop("length", "max_tokens", {"text": "I will now write the"})),
    "refusal": ([], refusal),
    "content-filter": ([], stop("content_filter", "refusal", {"text": ""})),
    "server-error-once": (
        [_const({"status": 500, "message": "boom", "headers": {"retry-after-ms": "10"}})],
        _const(finish()),
    ),
    "server-error-always": ([], _const({"status": 500, "message": "boom", "headers": {"retry-after-ms": "10"}})),
    "retry-after-100000": ([], _const({"status": 429, "message": "slow down", "headers": {"retry-after": "100000"}})),
    "should-retry-false": (
        [],
        _const({"status": 503, "message": "down for good", "headers": {"x-should-retry": "false"}}),
    ),
}


def _text(content: Any) -> str:
    """A message's text: its content, or its first block's text (blocks after it and cache marks come and go)."""
    if isinstance(content, list):
        return next((str(b.get("text", "")) for b in content if isinstance(b, dict)), "")
    return str(content)


@dataclass
class HostileModel:
    """The reply function of a `WireServer`: the planner and each agent play their own copy of a case."""

    turns: list[Build]
    fallback: Build
    plan: Callable[[], dict[str, Any]] | None = None
    planner_turns: list[Build] = field(default_factory=list)
    served: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, fmt: str, body: dict[str, Any]) -> Reply:
        tools = {t.get("name") or t.get("function", {}).get("name") for t in body.get("tools", [])}
        if "submit_plan" in tools:
            assert self.plan is not None, "a planner asked in a --single run"
            with self.lock:
                turn = self.served.get("planner", 0)
                self.served["planner"] = turn + 1
            if turn < len(self.planner_turns):
                return self.planner_turns[turn](fmt)
            return {"tool_calls": [{"name": "submit_plan", "arguments": {"plan": self.plan()}}]}
        first = _text(next((m["content"] for m in body["messages"] if m["role"] == "user"), ""))[:300]
        with self.lock:
            turn = self.served.get(first, 0)
            self.served[first] = turn + 1
        return (self.turns[turn] if turn < len(self.turns) else self.fallback)(fmt)


def plan_of(count: int, seed: int = 0) -> Callable[[], dict[str, Any]]:
    """A parallel plan of `count` disjoint tasks, each writing a file of its own."""
    rng = random.Random(seed)
    ids = [f"t{i}-{rng.randrange(10**6)}" for i in range(count)]

    def plan() -> dict[str, Any]:
        tasks = [
            {"id": i, "title": f"write {i}.txt", "instructions": f"Create {i}.txt.", "writes": [f"{i}.txt"]}
            for i in ids
        ]
        return {"mode": "parallel", "reason": "independent files", "tasks": tasks}

    return plan
