"""What each event says, worded once: `describe(event)` and its plain, rich-markup and HTML renderings."""

from __future__ import annotations

import json

__all__ = ["short_args"]


def short_args(arguments: dict[str, object] | None, raw: str = "", width: int = 90) -> str:
    """Tool arguments on one line, long values shortened."""
    if arguments is None:
        return f"<malformed JSON: {raw[:40]!r}>"
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        parts.append(f"{key}={text[:40] + '…' if len(text) > 40 else text}")
    line = " ".join(parts)
    return line if len(line) <= width else line[: width - 1] + "…"
