"""A table of the read-only commands (`plait runs`, `status`, `cost`): its columns and rows of console markup,
which rich draws as a `Table` in a terminal and which is drawn here, as rich would without styles, elsewhere.

The plain drawing follows rich's table layout for what these tables use: each column measured (its widest word,
its widest line, the padding, a minimum and a maximum), the widths collapsed when the table is wider than the page
(the widest wrappable columns first, then all evenly), each cell wrapped in its column and the rows framed by
rich's heavy-headed box, or by nothing. `tests/ui/test_plain.py` compares the two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from plait.ui._cells import cells
from plait.ui._plain import markup_text, truncate, wrap

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["Column", "Grid"]


class Column(NamedTuple):
    """A column: its header, how its cells are justified, wrapped and cut, and its narrowest and widest width."""

    header: str
    justify: str = "left"
    no_wrap: bool = False
    overflow: str = "ellipsis"
    min_width: int | None = None
    max_width: int | None = None


_TOP, _HEAD, _HEAD_ROW, _ROW, _BOTTOM = "┏━┳┓", "┃┃┃", "┡━╇┩", "│││", "└─┴┘"
"""rich's heavy-headed box: the top edge, a header row's edges and divider, the line under the header, a body row's
edges and divider, the bottom edge."""


class Grid:
    """A table of console markup: in rich's heavy-headed box with `boxed` (cells padded on every side), else with
    no box and no padding at its edges; `title` above it, on the left."""

    def __init__(self, *columns: Column, boxed: bool, title: str = "", header_style: str = "") -> None:
        self.columns = columns
        self.boxed = boxed
        self.title = title
        self.header_style = header_style
        self.rows: list[tuple[str, ...]] = []

    def add_row(self, *row: str) -> None:
        """Add a row, a cell of console markup per column."""
        self.rows.append(row)

    def __rich__(self) -> Table:
        """The rich table drawn in a terminal."""
        from rich.table import Table

        options: dict[str, object] = {} if self.boxed else {"box": None, "pad_edge": False}
        if self.title:
            options |= {"title": self.title, "title_justify": "left", "title_style": "bold"}
        if self.header_style:
            options["header_style"] = self.header_style
        table = Table(**options)  # type: ignore[arg-type]
        for c in self.columns:
            table.add_column(
                c.header,
                justify=c.justify,  # type: ignore[arg-type]
                no_wrap=c.no_wrap,
                overflow=c.overflow,  # type: ignore[arg-type]
                min_width=c.min_width,
                max_width=c.max_width,
            )
        for row in self.rows:
            table.add_row(*row)
        return table

    def _pads(self, index: int) -> tuple[int, int]:
        last = len(self.columns) - 1
        return (1 if self.boxed or index else 0), (1 if self.boxed or index < last else 0)

    def plain_lines(self, width: int, *, soft_wrap: bool = False) -> list[str]:
        """The table's lines as rich draws them unstyled on a page `width` cells wide (its title not wrapped on a
        soft-wrapped page)."""
        texts = [[markup_text(c.header), *(markup_text(r[i]) for r in self.rows)] for i, c in enumerate(self.columns)]
        extra = len(self.columns) + 1 if self.boxed else 0
        widths = self._widths(texts, width - extra)
        lines: list[str] = []
        if self.title:
            title, overflow = markup_text(self.title), "ignore" if soft_wrap else "fold"
            lines += wrap(title, sum(widths) + extra, justify="left", overflow=overflow, no_wrap=soft_wrap)
        if self.boxed:
            lines.append(_edge(_TOP, widths))
        for number in range(len(self.rows) + 1):
            drawn = [self._cell(i, texts[i][number], w, header=not number) for i, w in enumerate(widths)]
            height = max(1, *(len(cell) for cell in drawn))
            drawn = [_shape(cell, w, height, bottom=not number) for cell, w in zip(drawn, widths, strict=True)]
            edges = _HEAD if not number else _ROW
            for line in zip(*drawn, strict=True):
                lines.append(edges[0] + edges[1].join(line) + edges[2] if self.boxed else "".join(line))
            if self.boxed and not number:
                lines.append(_edge(_HEAD_ROW, widths))
        if self.boxed:
            lines.append(_edge(_BOTTOM, widths))
        return lines

    def _cell(self, index: int, text: str, width: int, *, header: bool) -> list[str]:
        column, (left, right) = self.columns[index], self._pads(index)
        inner = width - left - right
        if inner < 1:  # rich renders nothing narrower than a cell
            return []
        shown = wrap(text, inner, justify=column.justify, overflow=column.overflow, no_wrap=column.no_wrap)
        return [" " * left + truncate(line, inner, "crop", pad=True) + " " * right for line in shown]

    def _measure(self, index: int, texts: list[str], limit: int) -> tuple[int, int]:
        """The narrowest and widest the column can be, at most `limit` cells (with its padding)."""
        if limit < 1:
            return 0, 0
        left, right = self._pads(index)
        pad = left + right
        measured = [_measure_cell(text, limit, pad) for text in texts]
        low, high = min(max(m[0] for m in measured), limit), min(max(m[1] for m in measured), limit)
        column = self.columns[index]
        if column.min_width is not None:
            floor = max(0, column.min_width + pad)
            low, high = max(low, floor), max(high, floor)
        if column.max_width is not None:
            low, high = min(low, column.max_width + pad), min(high, column.max_width + pad)
        return low, high

    def _widths(self, texts: list[list[str]], limit: int) -> list[int]:
        widths = [self._measure(i, t, limit)[1] or 1 for i, t in enumerate(texts)]
        if sum(widths) > limit:
            widths = _collapse(widths, [not c.no_wrap for c in self.columns], limit)
            if sum(widths) > limit:
                widths = _reduce(sum(widths) - limit, [1] * len(widths), widths, widths)
            widths = [self._measure(i, t, w)[1] for i, (t, w) in enumerate(zip(texts, widths, strict=True))]
        return widths


def _measure_cell(text: str, limit: int, pad: int) -> tuple[int, int]:
    """A padded cell's narrowest and widest width, as rich measures its text."""
    inner = limit - pad
    if inner < 1:
        return limit, limit
    lines, words = text.splitlines(), text.split()
    high = max((cells(line) for line in lines), default=0)
    low = max((cells(word) for word in words), default=high)
    low = max(0, min(max(0, low), high))
    high = max(0, low, high)
    low, high = min(low, inner), min(high, inner)
    if high < 1:
        low, high = 0, 0
    return min(low + pad, limit), min(high + pad, limit)


def _shape(lines: list[str], width: int, height: int, *, bottom: bool) -> list[str]:
    blank = [" " * width] * (height - len(lines))
    return blank + lines if bottom else lines + blank


def _edge(box: str, widths: list[int]) -> str:
    return box[0] + box[2].join(box[1] * w for w in widths) + box[3]


def _collapse(widths: list[int], wrappable: list[bool], limit: int) -> list[int]:
    """The widths narrowed to `limit`, the widest wrappable columns first, as rich's table narrows them."""
    excess = sum(widths) - limit
    if not any(wrappable):
        return widths
    while sum(widths) and excess > 0:
        widest = max(w for w, wraps in zip(widths, wrappable, strict=True) if wraps)
        second = max(w if wraps and w != widest else 0 for w, wraps in zip(widths, wrappable, strict=True))
        ratios = [1 if w == widest and wraps else 0 for w, wraps in zip(widths, wrappable, strict=True)]
        if not any(ratios) or not widest - second:
            break
        widths = _reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
        excess = sum(widths) - limit
    return widths


def _reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    """`values` less `total` shared by `ratios`, each by at most its maximum (rich's `ratio_reduce`)."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums, strict=True)]
    left, weight = total, sum(ratios)
    if not weight:
        return values[:]
    result: list[int] = []
    for ratio, maximum, value in zip(ratios, maximums, values, strict=True):
        if ratio and weight > 0:
            taken = min(maximum, round(ratio * left / weight))
            result.append(value - taken)
            left -= taken
            weight -= ratio
        else:
            result.append(value)
    return result
