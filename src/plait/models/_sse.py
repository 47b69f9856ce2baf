"""Reading a streamed reply (server-sent events) as untrusted input: lines, events and their JSON data.

A stream is read in chunks as they come, so the request timeout bounds the silence between two chunks,
never the whole reply. Its data lines are joined per event and read by `read_chunk`: JSON that is not an
object raises `BadReplyBody`, which the providers retry (the whole call again). A stream, or one line of it,
longer than its cap stops the call: no reply is that long.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from plait.errors import ModelError
from plait.models._reply import read_chunk

__all__ = ["DONE", "MAX_LINE", "MAX_STREAM", "Event", "events"]

MAX_STREAM = 64 << 20
"""Bytes of one streamed reply read at most."""
MAX_LINE = 16 << 20
"""Bytes of one line (one event's data) read at most."""
DONE = "[DONE]"
"""The data of the last event of a Chat Completions stream."""


@dataclass(frozen=True)
class Event:
    """One event: its `event:` name ("" when it has none) and its data, a JSON object (empty for `[DONE]`)."""

    name: str
    data: dict[str, Any]
    done: bool = False


def _event(name: str, lines: list[bytes]) -> Event:
    data = b"\n".join(lines)
    if data.strip() == DONE.encode():
        return Event(name, {}, done=True)
    return Event(name, read_chunk(data))


async def _lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The lines of a byte stream, without their ends (LF, CRLF or CR)."""
    pending, total = bytearray(), 0
    async for chunk in chunks:
        total += len(chunk)
        if total > MAX_STREAM:
            raise ModelError(f"the streamed reply is over {MAX_STREAM >> 20} MiB: stopped reading it")
        pending += chunk  # a long line comes in many chunks: kept in one growing buffer, split once it ends
        if b"\n" in chunk or b"\r" in chunk:
            text = bytes(pending).replace(b"\r\n", b"\n")
            held = text.endswith(b"\r")  # perhaps the first half of a CRLF
            lines = (text[:-1] if held else text).replace(b"\r", b"\n").split(b"\n")
            pending = bytearray(lines.pop() + (b"\r" if held else b""))
            for line in lines:
                yield line
        if len(pending) > MAX_LINE:
            raise ModelError(f"a line of the streamed reply is over {MAX_LINE >> 20} MiB: stopped reading it")
    if last := bytes(pending).rstrip(b"\r"):
        yield last


async def events(chunks: AsyncIterator[bytes]) -> AsyncIterator[Event]:
    """The events of a stream of server-sent events; comments and events without data are skipped.

    Raises:
        BadReplyBody: An event's data is not a JSON object.
        ModelError: The stream or a line of it is over its cap.
    """
    name, data, size = "", list[bytes](), 0
    async for line in _lines(chunks):
        if not line:
            if data:
                yield _event(name, data)
            name, data, size = "", [], 0
            continue
        if line.startswith(b":"):
            continue
        key, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if key == b"data":
            size += len(value)
            if size > MAX_LINE:
                raise ModelError(f"an event of the streamed reply is over {MAX_LINE >> 20} MiB: stopped reading it")
            data.append(value)
        elif key == b"event":
            name = value.decode("utf-8", "replace")[:100]
    if data:
        yield _event(name, data)
