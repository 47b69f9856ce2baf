"""Server-sent events read from a byte stream split anywhere: line ends of every kind, data over many lines,
comments, and the caps that stop a stream no reply needs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from plait.errors import ModelError
from plait.messages import BadReplyBody
from plait.models import _sse
from plait.models._sse import Event, events


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _read(data: bytes, size: int) -> list[Event]:
    async def read() -> list[Event]:
        return [event async for event in events(_chunks(data, size))]

    return asyncio.run(read())


STREAM = (
    b": keepalive\r\n\r\n"
    b'event: message_start\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'
    b'data: {"b": "\xc3\xa9"}\r\r'
    b"event: nothing\n\n"
    b"data: [DONE]"
)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_events_in_chunks_of_any_size(size: int) -> None:
    assert _read(STREAM, size) == [
        Event("message_start", {"a": 1}),
        Event("", {"b": "é"}),
        Event("", {}, done=True),
    ]


@pytest.mark.parametrize("data", [b'data: {"a": \n\n', b"data: [1]\n\n", b"data: \xff\n\n"])
def test_data_that_is_not_an_object_is_a_bad_reply(data: bytes) -> None:
    with pytest.raises(BadReplyBody):
        _read(data, 4)


def test_a_stream_over_its_cap_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sse, "MAX_STREAM", 1000)
    with pytest.raises(ModelError, match="over 0 MiB"):
        _read(b"data: {}\n\n" * 200, 64)


def test_a_line_over_its_cap_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sse, "MAX_LINE", 100)
    with pytest.raises(ModelError, match="a line of the streamed reply"):
        _read(b"data: " + b"x" * 500, 10)
