"""What `plait show` draws of a transcript: a line of markup, a body of text, a framed body, a stack of them and a
diff; rich draws each (`__rich__`, the same objects as ever) in a terminal, and each draws itself as rich would,
unstyled, on a plain page (`plait.ui._plain`).

A frame is rich's `Panel` as the transcript makes it: as wide as the page, rounded, its title on the left of the top
edge, its body one cell in from each side. `tests/ui/test_plain.py` compares the two drawings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from plait.ui._cells import cells
from plait.ui._plain import expand_tabs, markup_text, strip_controls, text_lines, truncate

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

__all__ = ["Body", "Diff", "Framed", "Line", "Stack"]


class Line:
    """A line of console markup (`Text.from_markup`)."""

    rich_text: ClassVar[bool] = True
    """Rich text: printed, it ends with the print's `end`."""

    def __init__(self, markup: str) -> None:
        self.markup = markup

    def __rich__(self) -> Text:
        """The line as rich text."""
        from rich.text import Text

        return Text.from_markup(self.markup)

    def plain_lines(self, width: int, *, soft_wrap: bool = False) -> list[str]:
        """The line wrapped to `width`."""
        return text_lines(markup_text(self.markup), width, soft_wrap=soft_wrap)


class Body:
    """Text shown as it is, in `style`, its tabs `tab_size` wide (the console's 8 when None), coloured as JSON with
    `json`."""

    rich_text: ClassVar[bool] = True
    """Rich text: printed, it ends with the print's `end`."""

    def __init__(self, text: str, style: str = "", *, tab_size: int | None = None, json: bool = False) -> None:
        self.text, self.style, self.tab_size, self.json = text, style, tab_size, json

    def __rich__(self) -> Text:
        """The body as rich text."""
        from rich.text import Text

        text = Text(self.text, style=self.style, tab_size=self.tab_size)
        if self.json:
            from rich.highlighter import JSONHighlighter

            return JSONHighlighter()(text)
        return text

    def plain_lines(self, width: int, *, soft_wrap: bool = False) -> list[str]:
        """The body wrapped to `width`."""
        return text_lines(strip_controls(self.text), width, soft_wrap=soft_wrap, tab_size=self.tab_size or 8)


class Framed:
    """A body (console markup or a `Body`) in a frame as wide as the page, titled on the left in `border` colour."""

    def __init__(self, body: str | Body, title: str, border: str) -> None:
        self.body, self.title, self.border = body, title, border

    def __rich__(self) -> RenderableType:
        """The frame as a rich panel."""
        from rich.panel import Panel

        body = self.body if isinstance(self.body, str) else self.body.__rich__()
        return Panel(body, title=self.title, title_align="left", border_style=self.border)

    def plain_lines(self, width: int, *, soft_wrap: bool = False) -> list[str]:
        """The frame's lines, `width` cells wide."""
        inner = width - 4
        title = " " + expand_tabs(markup_text(self.title).replace("\n", " ")) + " "
        if width <= 4 or not self.title:
            top = "╭" + "─" * (width - 2) + "╮"
        else:
            title = truncate(title, inner)
            top = "╭─" + title + "─" * (inner - cells(title)) + "─╮"
        body: list[str] = []
        if inner >= 1:  # rich renders nothing narrower than a cell
            if isinstance(self.body, str):
                shown = text_lines(markup_text(self.body), inner, soft_wrap=soft_wrap)
            else:
                shown = self.body.plain_lines(inner, soft_wrap=soft_wrap)
            body = ["│ " + truncate(line, inner, "crop", pad=True) + " │" for line in shown]
        return [top, *body, "╰" + "─" * (width - 2) + "╯"]


class Stack:
    """Blocks one under another (rich's `Group`)."""

    def __init__(self, *blocks: Line | Body | Framed | Stack) -> None:
        self.blocks = blocks

    def __rich__(self) -> RenderableType:
        """The blocks as a rich group."""
        from rich.console import Group

        return Group(*(block.__rich__() for block in self.blocks))

    def plain_lines(self, width: int, *, soft_wrap: bool = False) -> list[str]:
        """Each block's lines in turn."""
        return [line for block in self.blocks for line in block.plain_lines(width, soft_wrap=soft_wrap)]


class Diff:
    """A diff's lines, each in the style of its first characters, printed as they are: never wrapped, never cut."""

    rich_text: ClassVar[bool] = True
    """Rich text: printed, it ends with the print's `end`."""

    def __init__(self, lines: list[tuple[str, str]]) -> None:
        self.lines = lines

    def __rich__(self) -> Text:
        """The diff as rich text."""
        from rich.text import Text

        text = Text()
        for line, style in self.lines:
            text.append(line, style=style)
            text.append("\n")
        return text

    def plain_lines(self, width: int, *, soft_wrap: bool = False) -> list[str]:
        """Its lines, tabs expanded, and an empty one after the last newline."""
        return text_lines(strip_controls("".join(line + "\n" for line, _ in self.lines)), width, soft_wrap=soft_wrap)
