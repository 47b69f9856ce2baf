"""The plain page draws what rich's console draws when nothing is styled, byte for byte: markup, wrapped lines and
the read-only commands' tables, at many widths, with long words, wide characters, emoji codes and escapes."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.markup import render

from plait.ui._grid import Column, Grid
from plait.ui._plain import PlainPage, escape, markup_text, styled

WIDTHS = [1, 2, 5, 9, 16, 23, 40, 61, 80, 120, 200]

TEXTS = [
    "",
    "plain words",
    "a [link=x]tag[/link] and \\[escaped] [not a tag] \\\\[bold]double[/bold] end\\",
    "[bold]run 1[/] · done · 8.0s · [red]failed[/red]",
    "emoji :smile: and :thumbs_up: but not 10:30:00 or a::b or :nosuchcode:",
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


def _plain(thing: str | Grid, width: int, capsys: pytest.CaptureFixture[str], *, soft_wrap: bool = False) -> str:
    PlainPage(width, soft_wrap=soft_wrap).print(thing)
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
