"""Reading SQLite's write-ahead log beside an event log: does it end in a write that a crash cut off?

SQLite itself silently ignores such a tail when it opens the log (every frame carries a checksum chained to the
one before), so a log that lost its last writes to a power cut reads as healthy. This module looks at the file
before SQLite does. The layout is SQLite's documented WAL format (https://www.sqlite.org/fileformat.html#wal).
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["wal_damage"]

_HEADER = 32
_FRAME_HEADER = 24
_MAGIC = (0x377F0682, 0x377F0683)  # little- or big-endian checksums


def _checksum(data: bytes, big: bool, s0: int, s1: int) -> tuple[int, int]:
    for x0, x1 in struct.iter_unpack(">II" if big else "<II", data):
        s0 = (s0 + x0 + s1) & 0xFFFFFFFF
        s1 = (s1 + x1 + s0) & 0xFFFFFFFF
    return s0, s1


def wal_damage(db: Path) -> str | None:
    """What the write-ahead log of the SQLite file `db` lost to a cut-off write, or None when it ends whole.

    Frames after the last whole transaction are lost when they are of the log's current generation (its salts)
    but cut short or failing their checksum: the writes a power cut or crash interrupted. Frames of an earlier
    generation, left behind when SQLite restarted the log from its beginning, are not damage.
    """
    try:
        data = db.with_name(db.name + "-wal").read_bytes()
    except OSError:
        return None
    if len(data) < _HEADER:
        return None
    magic, _, page_size, _, salt1, salt2, c0, c1 = struct.unpack(">8I", data[:_HEADER])
    if magic not in _MAGIC:
        return None
    big = magic == _MAGIC[1]
    if _checksum(data[:24], big, 0, 0) != (c0, c1):
        return None  # a header SQLite would not trust either: it starts the log afresh
    s0, s1 = c0, c1
    size = _FRAME_HEADER + page_size
    at = committed = _HEADER
    while at + _FRAME_HEADER <= len(data):
        _, commit, f_salt1, f_salt2, f0, f1 = struct.unpack(">6I", data[at : at + _FRAME_HEADER])
        if (f_salt1, f_salt2) != (salt1, salt2):
            break  # an earlier generation's frame: the current one ended before it
        if at + size > len(data):
            return _lost(len(data) - committed, "a frame cut short")
        s0, s1 = _checksum(data[at : at + 8], big, s0, s1)
        s0, s1 = _checksum(data[at + _FRAME_HEADER : at + size], big, s0, s1)
        if (s0, s1) != (f0, f1):
            return _lost(len(data) - committed, "a frame whose checksum fails")
        at += size
        if commit:
            committed = at
    if at < len(data) and at + _FRAME_HEADER > len(data) and data[at:].strip(b"\0"):
        return _lost(len(data) - committed, "a frame cut short")
    if at > committed:
        return _lost(at - committed, "frames of a transaction that never committed")
    return None


def _lost(size: int, what: str) -> str:
    return (
        f"the event log's write-ahead file ends in {size} bytes of writes a crash or power loss cut off "
        f"({what}): events appended just before it are lost, and `plait resume` redoes what they recorded"
    )
