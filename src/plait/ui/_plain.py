"""What rich draws when nothing is styled, drawn without rich's console: text from markup, wrapped as rich wraps
it, a rule, a page that prints them.

Importing rich's console costs more than `plait status` does otherwise. When the output is not a terminal (nor
said to be one, `FORCE_COLOR`, `TTY_COMPATIBLE`), rich writes no style and its output is plain text laid out by
a few rules: markup becomes its text (emoji codes replaced, control codes dropped), a line is wrapped at word
boundaries to the page's width, a long word folded or cut. Those rules are followed here, with rich's cell widths
and line breaking (`plait.ui._cells`), so that the bytes are the same; `tests/ui/test_plain.py` draws each thing
both ways and compares them. In a terminal rich draws.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any, Protocol

from plait.ui._cells import cells, divide_line, set_size

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EMOJI_CHARACTERS",
    "Drawable",
    "Page",
    "PlainPage",
    "escape",
    "expand_tabs",
    "markup_text",
    "might_be_emoji",
    "page",
    "page_width",
    "plain_page",
    "strip_controls",
    "styled",
    "text_lines",
    "truncate",
    "wrap",
]

_ESCAPED = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
_TAGS = re.compile(r"""((\\*)\[([a-z#/@][^[]*?)])""")
"""A markup tag and the backslashes before it, as rich finds them."""
_EMOJI_CODE = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")
"""An emoji code, as rich finds them."""
EMOJI_CHARACTERS = frozenset("!#&()*+-.0123456789_abcdefghijklmnopqrstuvwxyzãåçéíô’")
"""The characters of rich's emoji names (a test keeps them so): a code of others is no emoji, and rich's table of
emoji, slow to import, is not read for it."""
_TRAILING_SPACE = re.compile(r"\s+$")
_STRIPPED = dict.fromkeys((7, 8, 11, 12, 13))
"""The control codes rich drops from text (bell, backspace, vertical tab, form feed, carriage return)."""


class Drawable(Protocol):
    """A thing a page draws: its lines at a width, without their newlines."""

    def plain_lines(self, width: int, *, soft_wrap: bool = False) -> list[str]:
        """The lines rich would draw of it at `width`, unstyled (on a soft-wrapped page with `soft_wrap`)."""
        ...


def styled(file: Any = None) -> bool:
    """Whether rich writes to `file` (stdout by default) as to a terminal, or this module cannot draw what it
    would: a terminal or one said to be (`TTY_COMPATIBLE`, `FORCE_COLOR`), an encoding other than UTF-8, Windows."""
    file = sys.stdout if file is None else file
    if os.name == "nt" or not (getattr(file, "encoding", None) or "utf-8").lower().startswith("utf"):
        return True
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return bool(file.isatty())
    except ValueError:  # a closed file
        return False


def strip_controls(text: str) -> str:
    """`text` without the control codes rich drops from text."""
    if text.isprintable() or not any(code in text for code in "\a\b\v\f\r"):
        return text
    return text.translate(_STRIPPED)


def might_be_emoji(name: str) -> bool:
    """Whether `name` (between colons) may name one of rich's emoji."""
    return any(c.isalnum() for c in name) and EMOJI_CHARACTERS.issuperset(name.lower())


def _emoji(text: str) -> str:
    if ":" not in text or not any(might_be_emoji(m.group(2)) for m in _EMOJI_CODE.finditer(text)):
        return text
    from rich._emoji_replace import _emoji_replace

    return _emoji_replace(text)


def escape(text: str) -> str:
    """`text` escaped for console markup, as rich's `escape` escapes it (without importing rich's text)."""
    text = _ESCAPED.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)
    return text + "\\" if text.endswith("\\") and not text.endswith("\\\\") else text


def markup_text(markup: str) -> str:
    """The text rich shows of console markup: tags dropped, `\\[` unescaped, emoji codes replaced, control codes
    dropped."""
    if "[" not in markup:
        return strip_controls(_emoji(markup))
    parts: list[str] = []
    position = 0
    for match in _TAGS.finditer(markup):
        full, escapes, _ = match.groups()
        start, end = match.span()
        if start > position:
            parts.append(_emoji(markup[position:start].replace("\\[", "[")))
        position = end
        if escapes:
            backslashes, escaped = divmod(len(escapes), 2)
            if backslashes:
                parts.append("\\" * backslashes)
            if escaped:
                parts.append(_emoji(full[len(escapes) :].replace("\\[", "[")))
    if position < len(markup):
        parts.append(_emoji(markup[position:].replace("\\[", "[")))
    return strip_controls("".join(parts))


def truncate(line: str, width: int, overflow: str = "fold", *, pad: bool = False) -> str:
    """`line` cut to `width` cells (with `…` for `ellipsis`), and padded to it with `pad`, as rich's text is."""
    if overflow == "ignore":
        return line
    length = cells(line)
    if length > width:
        line = set_size(line, width - 1) + "…" if overflow == "ellipsis" else set_size(line, width)
    elif pad and length < width:
        line += " " * (width - length)
    return line


def expand_tabs(line: str, tab_size: int = 8) -> str:
    """`line` with its tabs turned into spaces up to the next multiple of `tab_size` cells, as rich does."""
    out: list[str] = []
    position = 0
    for part in re.split(r"(?<=\t)", line):
        if part.endswith("\t"):
            part = part[:-1] + " "
            position += cells(part)
            if position % tab_size:
                part += " " * (tab_size - position % tab_size)
                position += tab_size - position % tab_size
        else:
            position += cells(part)
        out.append(part)
    return "".join(out)


def _justify(lines: list[str], width: int, justify: str, overflow: str) -> list[str]:
    if justify == "left":
        return [truncate(line, width, overflow, pad=True) for line in lines]
    if justify == "right":
        shown = [truncate(line.rstrip(), width, overflow) for line in lines]
        return [" " * max(width - cells(line), 0) + line for line in shown]
    if justify != "default":
        raise ValueError(f"cannot justify {justify!r}")
    return lines


def wrap(
    text: str, width: int, *, justify: str = "default", overflow: str = "fold", no_wrap: bool = False, tab_size: int = 8
) -> list[str]:
    """The lines of `text` wrapped to `width` cells as rich's `Text.wrap` wraps them."""
    lines: list[str] = []
    for line in text.split("\n"):
        if "\t" in line:
            line = expand_tabs(line, tab_size)
        if no_wrap or (len(line) <= width and cells(line) <= width):  # a line that fits is not divided
            pieces = [line]
        else:
            offsets = divide_line(line, width, fold=overflow == "fold")
            pieces = [line[a:b] for a, b in zip([0, *offsets], [*offsets, len(line)], strict=True)]
            pieces = [_rstrip_end(piece, width) for piece in pieces]
        pieces = _justify(pieces, width, justify, overflow)
        lines.extend(truncate(piece, width, overflow) for piece in pieces)
    return lines


def text_lines(text: str, width: int, *, soft_wrap: bool = False, tab_size: int = 8) -> list[str]:
    """The lines of rich text printed at `width`: wrapped (long words folded), or as they are with `soft_wrap`."""
    return wrap(text, width, no_wrap=soft_wrap, overflow="ignore" if soft_wrap else "fold", tab_size=tab_size)


def _rstrip_end(line: str, width: int) -> str:
    if len(line) > width and (space := _TRAILING_SPACE.search(line)) is not None:
        return line[: len(line) - min(len(space.group()), len(line) - width)]
    return line


class Page(Protocol):
    """Where the read-only commands print: rich's console, or a plain page that draws the same bytes."""

    def print(
        self, thing: Any, /, *, highlight: bool | None = None, soft_wrap: bool | None = None, end: str = "\n"
    ) -> None:
        """Print `thing`: console markup, or something drawable."""
        ...

    def rule(self) -> None:
        """A line across the page."""
        ...


class PlainPage:
    """A page of plain text `width` cells wide, printed as rich's console prints when nothing is styled; with
    `soft_wrap`, a line is neither wrapped nor cut (as rich's `soft_wrap`)."""

    def __init__(self, width: int, *, soft_wrap: bool = False) -> None:
        self.width = width
        self.soft_wrap = soft_wrap

    def print(
        self, thing: str | Drawable, /, *, highlight: bool | None = None, soft_wrap: bool | None = None, end: str = "\n"
    ) -> None:
        """Print `thing` (console markup or a `Drawable`) as rich prints it (`highlight` changes nothing without
        styles)."""
        soft = self.soft_wrap if soft_wrap is None else soft_wrap
        if isinstance(thing, str):
            lines = text_lines(markup_text(thing), self.width, soft_wrap=soft)
        else:
            lines = thing.plain_lines(self.width, soft_wrap=soft)
        if not soft:
            lines = [truncate(line, self.width, "crop") for line in lines]
        # rich ends text with the print's `end`, and anything else (a table, a panel, a group) with its own newline
        text = isinstance(thing, str) or getattr(thing, "rich_text", False)
        sys.stdout.write("\n".join(lines) + (end if text else "\n"))

    def rule(self) -> None:
        """A line of `─` across the page."""
        self.print("─" * self.width, soft_wrap=True)


def page_width() -> int:
    """The width rich gives a console of stdout that is not a terminal and was given none: `COLUMNS`, else the
    size of a terminal on stdin, stdout or stderr, else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        return width or 80
    return 80


def plain_page(width: int | None = None, *, soft_wrap: bool = False) -> PlainPage | None:
    """A plain page for stdout, or None when rich has to draw (`styled`)."""
    if styled():
        return None
    return PlainPage(page_width() if width is None else width, soft_wrap=soft_wrap)


def page(width: int | None = None, *, soft_wrap: bool = False) -> Page:
    """Where to print on stdout: a plain page when nothing is styled, else a rich console (`width` given, or the
    terminal's; the shared `plait.ui._reading.out` for a soft-wrapped page of the terminal's width)."""
    plain = plain_page(width, soft_wrap=soft_wrap)
    if plain is not None:
        return plain
    from plait.ui import _reading

    if soft_wrap and width is None:
        shared: Console = _reading.out
        return shared
    made: Console = _reading.console(soft_wrap=soft_wrap, **({} if width is None else {"width": width}))
    return made
