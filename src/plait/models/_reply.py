"""Reading a provider's reply body as untrusted input: any bytes, any JSON shape, cleaned and capped.

Both providers read the body themselves instead of trusting the SDK's parse, which hands back a bare string
for a body that is not JSON and builds its models without checking the types. Bytes that are not UTF-8 JSON
raise `BadReplyBody`, which the providers retry; every string read is stripped of unpaired surrogates (which
UTF-8 cannot encode, so no log could hold them), counts are non-negative integers, and text is capped.
"""

from __future__ import annotations

import math
import re
from typing import Any

from plait.messages import BadReplyBody, Usage, clean_text, strict_loads

__all__ = [
    "MAX_NAME",
    "MAX_STOP",
    "MAX_TEXT",
    "cap_text",
    "count",
    "excerpt",
    "field",
    "one_line",
    "read_chunk",
    "reply_error",
    "read_json",
    "string",
    "usage",
]

MAX_TEXT = 1 << 20
"""Characters of reply text kept; the rest is cut, and the text says so."""
MAX_NAME = 256
"""Characters kept of a tool name or a call id..."""
MAX_STOP = 64
"""...and of a stop reason."""
MAX_COUNT = 1 << 53
"""A token count above this is read as this (JSON readers lose precision past it)."""
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def one_line(text: str, limit: int = 100) -> str:
    """The start of `text` as one printable line, for an error message."""
    text = _UNPRINTABLE.sub("?", " ".join(text[: limit * 4].split()))
    return text[:limit] + ("..." if len(text) > limit else "")


def excerpt(data: bytes, limit: int = 100) -> str:
    """The start of a body as one printable line, for an error message."""
    return one_line(data[: limit * 4].decode("utf-8", "replace"), limit)


def reply_error(body: dict[str, Any], missing: str) -> BadReplyBody:
    """The error for a 200 whose body lacks what a reply has: its own error message if it has one."""
    error = field(body, "error", "message") or body.get("error")
    if isinstance(error, str) and error.strip():
        return BadReplyBody(f"an error in a 200: {one_line(error, 300)}")
    return BadReplyBody(f"no {missing} in the reply")


def _clean(value: Any) -> Any:
    """`value` with the unpaired surrogates of every string and key replaced, walked without recursion."""
    if isinstance(value, str):
        return clean_text(value)
    stack: list[Any] = [value] if isinstance(value, dict | list) else []
    while stack:
        node = stack.pop()
        for key, item in list(node.items() if isinstance(node, dict) else enumerate(node)):
            if isinstance(item, str):
                node[key] = clean_text(item)
            elif isinstance(item, dict | list):
                stack.append(item)
            if isinstance(key, str) and (cleaned := clean_text(key)) is not key:
                node[cleaned] = node.pop(key)
    return value


def read_chunk(data: bytes) -> dict[str, Any]:
    """The data of one event of a streamed reply as a JSON object; `BadReplyBody` when it is not one."""
    return read_json(data, "a streamed event")


def read_json(data: bytes, content_type: str = "") -> dict[str, Any]:
    """The body as a JSON object, whatever its content-type says; `BadReplyBody` when it is not one."""
    described = f"{len(data):,} bytes" + (f" of {content_type}" if content_type else "")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadReplyBody(f"not UTF-8 (byte {exc.start:,} of {described})") from exc
    try:
        value = strict_loads(text)
    except RecursionError as exc:
        raise BadReplyBody(f"JSON nested too deep to read ({described})") from exc
    except ValueError as exc:
        raise BadReplyBody(f"not JSON ({described}): {excerpt(data)}") from exc
    if not isinstance(value, dict):
        raise BadReplyBody(f"a JSON {type(value).__name__}, not an object ({described}): {excerpt(data)}")
    cleaned: dict[str, Any] = _clean(value)
    return cleaned


def field(node: Any, *path: str | int) -> Any:
    """`node[path[0]][path[1]]...`, or None where a step is missing or of the wrong type."""
    for step in path:
        if isinstance(step, str) and isinstance(node, dict):
            node = node.get(step)
        elif isinstance(step, int) and isinstance(node, list) and -len(node) <= step < len(node):
            node = node[step]
        else:
            return None
    return node


def string(value: Any, limit: int = MAX_NAME) -> str:
    """`value` if it is a string, cut at `limit` characters; "" for anything else."""
    return value[:limit] if isinstance(value, str) else ""


def cap_text(text: str) -> str:
    """`text` cut at `MAX_TEXT` characters, with a marker that says how much was dropped."""
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n[reply text cut at {MAX_TEXT:,} characters of {len(text):,}]"


def count(value: Any) -> int:
    """A token count: a non-negative number (or a string of digits) as an int, anything else 0."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip()[:20])
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return 0
    return int(min(value, MAX_COUNT))


def usage(input_tokens: Any, output_tokens: Any, cached: Any = 0, written: Any = 0) -> Usage:
    """Usage from raw counts; the cached and written parts never exceed the input they are part of."""
    total = count(input_tokens)
    read = min(count(cached), total)
    return Usage(
        input_tokens=total,
        output_tokens=count(output_tokens),
        cached_tokens=read,
        cache_write_tokens=min(count(written), total - read),
    )
