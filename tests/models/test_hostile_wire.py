"""Hostile replies the providers must read without crashing: each a known way a reply broke an agent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from plait.errors import ModelError
from plait.messages import (
    MAX_ARGUMENT_BYTES,
    MAX_ARGUMENT_DEPTH,
    STOP_LENGTH,
    STOP_REFUSAL,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Usage,
)
from plait.models import AnthropicModel, OpenAIModel
from wire_server import WireServer

if TYPE_CHECKING:
    from conftest import Retries

Make = Callable[..., OpenAIModel | AnthropicModel]
FORMATS = ["openai", "anthropic"]


@pytest.fixture(params=FORMATS)
def make(request: pytest.FixtureRequest) -> Make:
    fixture = "openai_model" if request.param == "openai" else "anthropic_model"
    made: Make = request.getfixturevalue(fixture)
    return made


def _openai(message: dict[str, Any], finish: str = "stop", usage: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def _anthropic(content: list[dict[str, Any]], stop: str = "end_turn", usage: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "m", "type": "message", "role": "assistant", "model": "m", "content": content}
    body |= {"stop_reason": stop, "stop_sequence": None}
    if usage is not None:
        body["usage"] = usage
    return body


def _body(data: str) -> dict[str, Any]:
    return {"body": data.encode(), "headers": {"content-type": "application/json"}}


def _round_trips(response: ModelResponse) -> ModelResponse:
    assert ModelResponse.model_validate_json(response.model_dump_json()) == response
    return response


@pytest.mark.parametrize("fmt", FORMATS)
def test_unpaired_surrogates_become_replacement_characters(
    server: WireServer, openai_model: Make, anthropic_model: Make, hello: ModelRequest, fmt: str
) -> None:
    if fmt == "openai":
        call = {
            "id": "c\ud800",
            "type": "function",
            "function": {"name": "run", "arguments": '{"command": "cat \\ud800.txt"}'},
        }
        server.push({"raw": _openai({"content": "see \udfff", "tool_calls": [call]})})
        model = openai_model()
    else:
        use = {"type": "tool_use", "id": "c\ud800", "name": "run", "input": {"command": "cat \ud800.txt"}}
        server.push({"raw": _anthropic([{"type": "text", "text": "see \udfff"}, use])})
        model = anthropic_model()
    response = _round_trips(asyncio.run(model.complete(hello)))
    assert response.text == "see \ufffd"
    [call_made] = response.tool_calls
    assert (call_made.id, call_made.arguments) == ("c\ufffd", {"command": "cat \ufffd.txt"})


@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH + 1, 500, 1000])
def test_arguments_nested_too_deep_are_a_malformed_call(
    server: WireServer, openai_model: Make, hello: ModelRequest, depth: int
) -> None:
    arguments = '{"a": ' * depth + "1" + "}" * depth
    call = {"id": "c", "type": "function", "function": {"name": "run", "arguments": arguments}}
    server.push({"raw": _openai({"content": None, "tool_calls": [call]})})
    [made] = _round_trips(asyncio.run(openai_model().complete(hello))).tool_calls
    assert made.arguments is None
    assert f"nested deeper than {MAX_ARGUMENT_DEPTH} levels, the cap" in made.raw_arguments
    assert len(made.raw_arguments) < 300


def test_anthropic_input_nested_too_deep_is_a_malformed_call(
    server: WireServer, anthropic_model: Make, hello: ModelRequest
) -> None:
    deep = '{"a": ' * 600 + "1" + "}" * 600
    server.push(
        _body(
            json.dumps(_anthropic([{"type": "tool_use", "id": "t", "name": "run", "input": "@"}])).replace('"@"', deep)
        )
    )
    [made] = _round_trips(asyncio.run(anthropic_model().complete(hello))).tool_calls
    assert made.arguments is None
    assert made.raw_arguments == f"<the arguments were nested deeper than {MAX_ARGUMENT_DEPTH} levels, the cap>"


def test_arguments_over_the_size_cap_are_a_malformed_call_that_says_so() -> None:
    big = json.dumps({"content": "y" * MAX_ARGUMENT_BYTES})
    for raw in (big, json.loads(big)):
        made = ToolCall.parse("c", "write_file", raw)
        assert made.arguments is None
        assert made.raw_arguments.startswith(f"<the arguments were {len(big):,} bytes, over the cap of 262,144;")
        assert len(made.raw_arguments) < 300
    assert ToolCall.parse("c", "run", '{"x": NaN}').arguments is None
    assert ToolCall.parse("c", "run", [1]).raw_arguments == "<the arguments were a JSON list, not an object>"


def test_reply_text_over_the_cap_is_cut_and_says_so(server: WireServer, make: Make, hello: ModelRequest) -> None:
    text = "x" * ((1 << 20) + 10)
    server.push({"text": text})
    response = asyncio.run(make().complete(hello))
    assert response.text == "x" * (1 << 20) + "\n[reply text cut at 1,048,576 characters of 1,048,586]"


@pytest.mark.parametrize("streamed", [False, True])
def test_a_reply_longer_than_the_body_cap_is_retried_then_a_one_line_error(
    server: WireServer, make: Make, hello: ModelRequest, retries: Retries, streamed: bool
) -> None:
    """A server that sends more than any reply holds (or an endless stream) is not read into memory to the end."""
    model = make()
    model.max_body = 4096  # the real cap is 256 MiB; the rule is the same
    long = {"text": "y" * 10_000, "stream": streamed}
    server.push(long, {"text": "ok"})

    assert asyncio.run(model.complete(hello, on_retry=retries)).text == "ok"
    assert [reason for _, _, reason in retries.calls] == ["unreadable reply body: the reply is longer than 4,096 bytes"]
    server.push({"text": "z" * 1000})
    assert asyncio.run(model.complete(hello)).text == "z" * 1000, "a reply within the cap reads as before"


@pytest.mark.parametrize(
    ("data", "kind", "said"),
    [
        (b"<html>502</html>", "text/html", "not JSON (16 bytes of text/html): <html>502</html>"),
        (b"<html>502</html>", "application/json", "not JSON (16 bytes of application/json): <html>502</html>"),
        (b"[]", "application/json", "a JSON list, not an object (2 bytes of application/json): []"),
        (b'{"a": "\xff\xfe"}', "application/json", "not UTF-8 (byte 7 of 11 bytes of application/json)"),
        (b'{"error": {"message": "upstream\\nfailed"}}', "application/json", "an error in a 200: upstream failed"),
    ],
)
def test_unreadable_200_is_retried_then_a_one_line_error(
    server: WireServer, make: Make, hello: ModelRequest, retries: Retries, data: bytes, kind: str, said: str
) -> None:
    bad = {"body": data, "headers": {"content-type": kind}}
    server.push(bad, {"text": "ok"})
    assert asyncio.run(make().complete(hello, on_retry=retries)).text == "ok"
    assert [reason for _, _, reason in retries.calls] == [f"unreadable reply body: {said}"]
    server.push(bad, bad)
    with pytest.raises(ModelError, match="failed after 1 retry: unreadable reply body: ") as caught:
        asyncio.run(make(max_retries=1).complete(hello))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({}, Usage()),
        ({"prompt_tokens": "12", "completion_tokens": "x"}, Usage(input_tokens=12)),
        ({"prompt_tokens": -5, "completion_tokens": 3}, Usage(output_tokens=3)),
        (
            {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 99}},
            Usage(input_tokens=10, output_tokens=1, cached_tokens=10),
        ),
        ("many", Usage()),
    ],
)
def test_openai_usage_of_any_shape(
    server: WireServer, openai_model: Make, hello: ModelRequest, usage: Any, expected: Usage
) -> None:
    server.push({"raw": _openai({"content": "hi"}, usage=usage)})
    assert asyncio.run(openai_model().complete(hello)).usage == expected


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, Usage()),
        ({"output_tokens": 4}, Usage(output_tokens=4)),
        ({"input_tokens": 5, "cache_read_input_tokens": None}, Usage(input_tokens=5)),
        (
            {"input_tokens": -7, "output_tokens": -1, "cache_read_input_tokens": 3},
            Usage(input_tokens=3, cached_tokens=3),
        ),
    ],
)
def test_anthropic_usage_missing_or_partial(
    server: WireServer, anthropic_model: Make, hello: ModelRequest, usage: Any, expected: Usage
) -> None:
    server.push({"raw": _anthropic([{"type": "text", "text": "hi"}], usage=usage)})
    assert asyncio.run(anthropic_model().complete(hello)).usage == expected


@pytest.mark.parametrize(("fmt", "stop"), [("openai", "length"), ("anthropic", "max_tokens")])
def test_a_reply_cut_by_the_token_limit_stops_for_length(
    server: WireServer, openai_model: Make, anthropic_model: Make, hello: ModelRequest, fmt: str, stop: str
) -> None:
    server.push({"text": "half a sent", "stop_reason": stop})
    model = openai_model() if fmt == "openai" else anthropic_model()
    assert asyncio.run(model.complete(hello)).stop_reason == STOP_LENGTH == "length"


def test_openai_refusal_keeps_its_text(server: WireServer, openai_model: Make, hello: ModelRequest) -> None:
    server.push({"raw": _openai({"content": None, "refusal": "I can't help with that."})})
    response = asyncio.run(openai_model().complete(hello))
    assert (response.text, response.stop_reason) == ("I can't help with that.", STOP_REFUSAL)
    assert STOP_REFUSAL == "refusal"


def test_anthropic_refusal(server: WireServer, anthropic_model: Make, hello: ModelRequest) -> None:
    server.push({"raw": _anthropic([{"type": "text", "text": "No."}], stop="refusal")})
    response = asyncio.run(anthropic_model().complete(hello))
    assert (response.text, response.stop_reason) == ("No.", "refusal")
