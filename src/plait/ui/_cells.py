"""How wide text is in a terminal and where rich breaks a line of it, without importing rich's tables of character
widths for text whose every character is one cell wide (nearly all a run's text).

rich counts a string of its single-cell characters (printable Latin, Greek, Cyrillic, box drawing, blocks,
Braille) as long as it is; a few more punctuation marks the views print (`…`, `→`, `✓`...) are one cell in every
Unicode version rich knows (a test checks both). Any other text is measured and broken by rich itself.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["EXTRA_SINGLE", "cells", "divide_line", "set_size"]

EXTRA_SINGLE = "…→←↑↓✓✗✔✘—–‘’“”•⏎⚠"
"""Characters outside rich's single-cell ranges that rich measures one cell wide."""


@cache
def _single_cells() -> re.Pattern[str]:
    return re.compile(f"[\x20-\x7e\xa0-\xac\xae-\u02ff\u0370-\u0482\u2500-\u25fc\u2800-\u28ff{EXTRA_SINGLE}]*")


@cache
def _word() -> re.Pattern[str]:
    return re.compile(r"\s*\S+\s*")


def _single(text: str) -> bool:
    return (text.isascii() and text.isprintable()) or _single_cells().fullmatch(text) is not None


def cells(text: str) -> int:
    """How many cells `text` takes in a terminal, as rich counts them."""
    if _single(text):
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def set_size(text: str, total: int) -> str:
    """`text` cut or padded with spaces to `total` cells, as rich's `set_cell_size`."""
    if _single(text):
        return text + " " * (total - len(text)) if len(text) < total else text[:total]
    from rich.cells import set_cell_size

    return set_cell_size(text, total)


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Where rich breaks `text` to fit `width` cells: after whole words, a word longer than a line folded (`fold`)
    or left whole to be cut."""
    if not _single(text):
        from rich._wrap import divide_line as divide

        return divide(text, width, fold)
    breaks: list[int] = []
    offset = 0
    for match in _word().finditer(text):
        start, word = match.start(), match.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            if fold:
                pieces = [word[i : i + width] for i in range(0, len(word), width)]
                if not pieces:  # no width at all
                    continue
                for piece in pieces[:-1]:
                    if start:
                        breaks.append(start)
                    start += len(piece)
                if start:
                    breaks.append(start)
                offset = len(pieces[-1])
            else:
                if start:
                    breaks.append(start)
                offset = len(word)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks
