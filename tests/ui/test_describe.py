"""An event is worded once: the progress lines, the live transcript, `plait log`, `plait show` and the report say it
in the same words, and each rendering shows those words as text, never as markup."""

from __future__ import annotations

import html
import io
import re

import pytest
from rich.console import Console
from rich.text import Text

from plait.events.types import (
    Committed,
    Decision,
    Event,
    MergeStep,
    ModelCallFailed,
    ModelCallRetried,
    TaskStarted,
)
from plait.ui._describe import describe
from plait.ui._event_lines import transcript_lines
from plait.ui._log_lines import log_line
from plait.ui._report_parts import transcripts_section
from plait.ui.progress import ProgressPrinter
from plait.ui.runview import RunView
from plait.ui.transcript import render_transcript

R = {"run_id": "r", "agent": "ledger"}
SHA = "ee14fda9190123456789"
EVENTS: list[Event] = [
    TaskStarted(**R, title="t", branch="plait/r/ledger.2", worktree="/w", base_commit="c", attempt=2),
    ModelCallRetried(**R, call=2, attempt=1, wait_s=2.0, reason="HTTP 429: rate limited"),
    ModelCallFailed(**R, call=3, error="the server closed the connection"),
    Decision(**R, topic="budget", decision="ledger spent 80% of its budget"),
    Committed(**R, sha=SHA, branch="plait/r/ledger.2", message="m", files=["tally/ledger.py"]),
    MergeStep(run_id="r", task="ledger", branch="b", rung="git", outcome="conflict", files=["tally/ledger.py"]),
]


def _progress(event: Event) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    ProgressPrinter(console, max_attempts=3)(event)
    return console.file.getvalue().strip()  # type: ignore[attr-defined]


def _shown(event: Event) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    render_transcript(console, "r", [event])
    return console.file.getvalue().splitlines()[0].strip()  # type: ignore[attr-defined]


def _reported(event: Event) -> str:
    section = transcripts_section(RunView.of("r", [event]), [event])
    step = re.search(r'<div class="step [a-z]+">(.*?)</div>', section)
    assert step is not None, section
    return html.unescape(re.sub(r"<[^>]+>", "", step.group(1)))


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_every_view_says_an_event_in_the_same_words(event: Event) -> None:
    words = _progress(event).removeprefix("ledger ").replace(" of 3", "")  # the progress lines know the limit
    assert [line.plain for line in transcript_lines(event)] == [words]
    assert log_line(event, 0.0).endswith(f" {words}")
    assert _shown(event) == f"ledger {words}"
    if event.agent:  # the report's transcripts are each agent's own events; a merge is the queue's
        assert _reported(event) == words


def test_the_renderings_show_the_words_as_text_never_as_markup() -> None:
    hostile = "[link=https://evil.example]x[/link] <script>alert(1)</script>"
    said = describe(ModelCallFailed(**R, call=1, error=hostile))
    assert said is not None and said.plain == f"model call 1 failed: {hostile}"
    assert Text.from_markup(said.markup()).plain == f"ledger model call 1 failed: {hostile}"
    assert said.text().plain == said.plain and "<script>" not in said.html()
    assert html.unescape(said.html()) == said.plain
