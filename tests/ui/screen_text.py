"""The text of a textual screen, read from the app's SVG screenshot, for comparing with a committed file."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

from textual.app import App

_TEXT = re.compile(r'<text [^>]*?x="([\d.]+)"[^>]*?clip-path="url\(#[\w-]+-line-(\d+)\)">([^<]*)</text>')
_CHAR_WIDTH = 12.2
"""Width of one cell in rich's SVG export (its line height of 20 times 0.61)."""


def screen_text(app: App[object]) -> str:
    """The screen as lines of text, trailing blanks removed."""
    rows: dict[int, dict[int, str]] = {}
    for x, line, content in _TEXT.findall(app.export_screenshot()):
        text = html.unescape(content).replace("\xa0", " ")
        col = round(float(x) / _CHAR_WIDTH)
        cells = rows.setdefault(int(line), {})
        for i, ch in enumerate(text):
            cells[col + i] = ch
    height = max(rows) + 1 if rows else 0
    out = []
    for y in range(height):
        cells = rows.get(y, {})
        width = max(cells) + 1 if cells else 0
        out.append("".join(cells.get(i, " ") for i in range(width)).rstrip())
    return "\n".join(out).rstrip() + "\n"


def assert_snapshot(text: str, path: Path) -> None:
    """Compare with the committed file; PLAIT_UPDATE_SNAPSHOTS=1 rewrites it instead."""
    if os.environ.get("PLAIT_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert path.exists(), f"no snapshot {path} yet: run with PLAIT_UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(), f"screen differs from {path}; PLAIT_UPDATE_SNAPSHOTS=1 updates it"
