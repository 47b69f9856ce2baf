"""The plain page draws what rich's console draws when nothing is styled, byte for byte: markup, wrapped lines and
the read-only commands' tables, at many widths, with long words, wide characters, emoji codes and escapes."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.markup import render

from plait.ui._blocks import Body, Diff, Framed, Line, Stack
from plait.ui._cells import EXTRA_SINGLE, cells, divide_line, set_size
from plait.ui._grid import Column, Grid
from plait.ui._plain import Drawable, PlainPage, escape, markup_text, might_be_emoji, styled

WIDTHS = [1, 2, 5, 9, 16, 23, 40, 61, 80, 120, 200]

TEXTS = [
    "",
    "plain words",
    "a [link=x]tag[/link] and \\[escaped] [not a tag] \\\\[bold]double[/bold] end\\",
    "[bold]run 1[/] · done · 8.0s · [red]failed[/red]",
    "emoji :smile: and :thumbs_up: but not 10:30:00 or a::b or :nosuchcode:",
    "variants :SMILE-text: :smile-emoji: and a path scripted:/a/b.yaml: and :+: and :+1:",
    "wide 漢字かな混じり文 and 🎉 party ❤️ and zero\u200dwidth",
    "tabs\tinside\tthe\ttext and a bell \x07 and a carriage\rreturn",
    "a_very_long_word_that_is_longer_than_most_lines_can_hold_without_folding_it_somewhere_anyway",
    "trailing spaces   \nsecond line\n\nafter a blank line\n",
    "time: 8.0s wall against 15s for the same agents one after another (1.91× speed-up); no agent busy for 1.3s",
    "  leading spaces and   runs   of    spaces   between words  ",
]


def _rich(thing: object, width: int, *, soft_wrap: bool = False, end: str = "\n") -> str:
    console = Console(file=io.StringIO(), width=width, soft_wrap=soft_wrap)
    console.print(thing, soft_wrap=soft_wrap, end=end)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def _plain(
    thing: str | Drawable, width: int, capsys: pytest.CaptureFixture[str], *, soft_wrap: bool = False, end: str = "\n"
) -> str:
    PlainPage(width, soft_wrap=soft_wrap).print(thing, end=end)
    return capsys.readouterr().out


@pytest.fixture(autouse=True)
def _unforced(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("text", TEXTS)
def test_markup_reads_as_rich_reads_it(text: str) -> None:
    assert escape(text) == rich_escape(text)
    assert markup_text(text) == render(text).plain
    assert markup_text(escape(text)) == render(rich_escape(text)).plain


@pytest.mark.parametrize("soft_wrap", [False, True])
@pytest.mark.parametrize("text", TEXTS)
def test_a_line_is_wrapped_as_rich_wraps_it(text: str, soft_wrap: bool, capsys: pytest.CaptureFixture[str]) -> None:
    for width in WIDTHS:
        assert _plain(text, width, capsys, soft_wrap=soft_wrap) == _rich(text, width, soft_wrap=soft_wrap), width


def _tables() -> list[Grid]:
    agents = Grid(*(Column(h) for h in ("agent", "task", "state", "steps", "cost")), boxed=False)
    figures = (Column(h, "right") for h in ("calls", "cost", "cache saved"))
    costs = Grid(Column("agent"), *figures, boxed=True, title="by agent")
    runs = Grid(
        Column("run", no_wrap=True, min_width=20),
        Column("status", no_wrap=True),
        Column("model", overflow="ellipsis", max_width=22),
        Column("calls", justify="right", no_wrap=True),
        Column("task", min_width=16, overflow="fold"),
        boxed=False,
        header_style="bold",
    )
    for i, text in enumerate(TEXTS):
        word = text.split()[0] if text.split() else ""
        agents.add_row(f"agent-{i}", escape(text[:40]), "[green]done[/]", str(i * 7), "$0.0012")
        costs.add_row(escape(word), str(i), f"${i * 1.5:.4f}", escape(text[-12:]))
        runs.add_row(f"20261202-0805{i:02d}-be57", "done", escape(word), str(i), escape(text))
    empty = Grid(Column("only"), Column("header", "right"), boxed=True, title="a title longer than the table is")
    return [agents, costs, runs, empty]


@pytest.mark.parametrize("soft_wrap", [False, True])
@pytest.mark.parametrize("table", _tables(), ids=["agents", "costs", "runs", "empty"])
def test_a_table_is_drawn_as_rich_draws_it(table: Grid, soft_wrap: bool, capsys: pytest.CaptureFixture[str]) -> None:
    for width in [*WIDTHS, 33, 47, 99]:
        assert _plain(table, width, capsys, soft_wrap=soft_wrap) == _rich(table, width, soft_wrap=soft_wrap), width


def test_text_is_measured_and_broken_as_rich_measures_and_breaks_it() -> None:
    from rich._unicode_data import VERSIONS
    from rich._wrap import divide_line as rich_divide
    from rich.cells import _SINGLE_CELLS, cell_len, get_character_cell_size, set_cell_size

    assert all(cells(c) == 1 for c in _SINGLE_CELLS)
    assert all(get_character_cell_size(c, version) == 1 for c in EXTRA_SINGLE for version in VERSIONS)
    for text in [*TEXTS, "… → ✓ — ⏎ " * 9, "x" * 250, "a " * 70 + "b" * 50]:
        text = markup_text(text).replace("\t", " ").replace("\n", " ")
        assert cells(text) == cell_len(text)
        for width in [*WIDTHS, 3]:
            assert set_size(text, width) == set_cell_size(text, width)
            for fold in (True, False):
                assert divide_line(text, width, fold) == rich_divide(text, width, fold), (text, width, fold)


def test_the_emoji_names_are_told_from_other_codes() -> None:
    """A code between colons that cannot name an emoji leaves rich's table of emoji unread: none is missed."""
    from rich._emoji_codes import EMOJI

    assert all(might_be_emoji(name) for name in EMOJI)
    assert not might_be_emoji("/work/plait/demo.yaml") and not might_be_emoji("+") and not might_be_emoji("")


def _blocks() -> list[Drawable]:
    blocks: list[Drawable] = []
    for text in TEXTS:
        body = Body(text, "italic")
        blocks.append(Stack(Line(f"[cyan]who[/] [bold]→ {escape(text[:30])}[/]"), Body(text, tab_size=4, json=True)))
        blocks.append(Framed(escape(text), f"[cyan]{escape(text[:20])}[/] task", "blue"))
        blocks.append(Framed(body, f"{escape(text[-25:])}\tresult (0.1s)", "green"))
        blocks.append(Stack(Line(escape(text)), body, Framed(Body(""), "", "red")))
    diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-\told line\n+new\tline that is long " + "x" * 90
    blocks.append(Diff([(line, "green" if line.startswith("+") else "") for line in diff.splitlines()]))
    return blocks


@pytest.mark.parametrize("soft_wrap", [False, True])
def test_a_transcripts_blocks_are_drawn_as_rich_draws_them(soft_wrap: bool, capsys: pytest.CaptureFixture[str]) -> None:
    for block in _blocks():
        for width in [*WIDTHS, 3, 4, 6]:
            drawn = _plain(block, width, capsys, soft_wrap=soft_wrap, end="")
            assert drawn == _rich(block, width, soft_wrap=soft_wrap, end=""), (width, block)


def test_rich_draws_for_a_terminal_or_one_said_to_be(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        encoding = "utf-8"

        def isatty(self) -> bool:
            return True

    pipe = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert styled(Tty()) and not styled(pipe)
    assert styled(io.TextIOWrapper(io.BytesIO(), encoding="latin-1"))  # rich would draw its boxes in ASCII
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert styled(pipe)
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    assert not styled(pipe)
