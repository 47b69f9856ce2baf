"""No text from a model, a command or a file drives the user's terminal, and none is read as rich markup.

Escape sequences (CSI, OSC 52 clipboard writes, OSC 8 links, title changes), C1 controls, BEL, backspace and
carriage-return overwrites and bidi overrides are planted in every kind of text a run records; every view
(`show`, `log`, `status`, `cost`, `report`, `runs`, the live view, progress lines, replies, errors) shows
them as visible marks instead.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from cli_support import git, run_in_process
from rich.console import Console
from screen_text import screen_text
from textual.widgets import DataTable, RichLog

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import (
    AgentStopped,
    Committed,
    Decision,
    Event,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallStarted,
    NotePosted,
    PromptGiven,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.messages import ModelResponse, ToolCall
from plait.run.session import Reply
from plait.ui._safe import visible
from plait.ui._session_output import show_reply
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard
from plait.ui.progress import ProgressPrinter

MARKUP = "[link=https://evil.example]x[/link][reverse]"
"""Rich markup: read as markup, it would draw a link (or reverse the screen) instead of showing these words."""
ESCAPES = (
    "\x1b[2J\x1b[H"  # CSI: clear the screen, cursor home
    "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: write the clipboard
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\"  # OSC 8: a hyperlink
    "\x1b]0;pwned\x07"  # a new window title
    "\x9b31m\x9d0;t\x9c"  # C1 CSI and OSC
    "bell\x07 back\x08\x08XX cr\rover"  # BEL, backspace and carriage-return overwrites
    " \u202eevil\u202c \u2066iso\u2069"  # bidi overrides
)
HTML = '<script>alert(1)</script><a href="javascript:alert(2)">y</a><img src=x onerror=alert(3)>'
HOSTILE = MARKUP + ESCAPES + HTML
RAW = ("\x1b", "\x9b", "\x9d", "\x9c", "\x07", "\x08", "\r", "\u202e", "\u202c", "\u2066", "\u2069")
RUN_ID = "20260101-000000-f00d"


def _assert_safe(text: str, where: str) -> None:
    found = [repr(c) for c in RAW if c in text]
    assert not found, f"{where} let {', '.join(found)} through"


def _plait(project: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """The real CLI, in this process; its output kept as written, so that no carriage return is turned into a
    newline."""
    done = run_in_process(args, project, env, "")
    return done.code, done.out, done.err


def test_visible_marks_every_control_and_keeps_newlines_and_tabs() -> None:
    shown = visible("a\tb\nc\r\n" + ESCAPES)
    _assert_safe(shown, "visible()")
    assert shown.startswith("a\tb\nc\n␛[2J␛[H␛]52;c;ZXZpbA==␇")
    for mark in ("␛]0;pwned␇", "\\x9b31m", "\\x9d0;t", "back␈␈XX", "cr␍over", "\\u202eevil", "\\u2066iso"):
        assert mark in shown
    assert visible(shown) == shown and visible("plain ünïcode ✓") == "plain ünïcode ✓"


def _hostile_run(base: str, commit: str) -> list[Event]:
    """A failed run in which every text a model, a command or a file gives is HOSTILE."""
    ids = {"run_id": RUN_ID, "agent": "main"}
    run = ToolCall.parse("c1", "run", {"command": HOSTILE})
    finish = ToolCall.parse("c3", "finish", {"summary": HOSTILE})
    return [
        RunStarted(run_id=RUN_ID, task=HOSTILE, repo="/repo", base_commit=base, base_ref="main", model="m"),
        TaskStarted(**ids, title=HOSTILE, branch=f"plait/{RUN_ID}/main", worktree="/w", base_commit=base),
        PromptGiven(**ids, system="s", user=HOSTILE),
        ModelCallStarted(**ids, call=1, req_hash="h1", model="m", messages=1),
        ModelCallRetried(**ids, call=1, attempt=1, wait_s=1.0, reason=HOSTILE),
        ModelCallFinished(**ids, call=1, req_hash="h1", response=ModelResponse(text=HOSTILE, tool_calls=(run,))),
        ToolCalled(**ids, call=run, step=1),
        ToolReturned(**ids, call_id="c1", name="run", output=f"{HOSTILE}\nexit 0", step=1),
        ToolCalled(**ids, call=ToolCall.parse("c2", "read_file", {"path": "evil.txt"}), step=1),
        ToolReturned(**ids, call_id="c2", name="read_file", output=f"1\t{HOSTILE}", step=1),
        NotePosted(**ids, topic="finding", text=HOSTILE),
        Decision(**ids, topic="context", decision=HOSTILE, reason=HOSTILE),
        ModelCallFailed(**ids, call=2, error=HOSTILE),
        ModelCallFinished(**ids, call=3, req_hash="h3", response=ModelResponse(tool_calls=(finish,))),
        ToolCalled(**ids, call=finish, step=3),
        AgentStopped(**ids, reason="finished", summary=HOSTILE, steps=3),
        Committed(**ids, sha=commit, branch=f"plait/{RUN_ID}/main", message=HOSTILE, files=["evil.txt"]),
        TaskFinished(**ids, status="done", summary=HOSTILE, commit=commit),
        RunFinished(run_id=RUN_ID, status="failed", reason=HOSTILE, branch=f"plait/{RUN_ID}/main", commit=commit),
    ]


@pytest.fixture
def hostile(project: Path) -> list[Event]:
    """The hostile run in the project's log; its commit adds a file whose content is HOSTILE (for the diff)."""
    base = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "-b", f"plait/{RUN_ID}/main")
    (project / "evil.txt").write_text(HOSTILE + "\n")
    git(project, "add", "evil.txt")
    git(project, "commit", "-qm", "evil")
    commit = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "main")
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    events = [store.append(e) for e in _hostile_run(base, commit)]
    store.close()
    return events


@pytest.mark.parametrize(
    "args",
    [
        ["show", RUN_ID],
        ["show", RUN_ID, "--full", "--json"],
        ["log", RUN_ID],
        ["log", RUN_ID, "--json"],
        ["status", RUN_ID, "--plain"],
        ["status", RUN_ID, "--json"],
        ["cost", RUN_ID],
        ["report", RUN_ID],
        ["runs"],
        ["runs", "--json"],
    ],
    ids=lambda a: " ".join(a[:1] + [x for x in a[1:] if x.startswith("-")]),
)
def test_the_views_of_a_recorded_run_show_control_characters_as_marks(
    project: Path, env: dict[str, str], hostile: list[Event], args: list[str]
) -> None:
    code, out, err = _plait(project, env, *args)
    assert code == 0, err
    _assert_safe(out + err, f"plait {' '.join(args)}")
    if args[0] == "cost":  # the cost view shows no text of the run, only that none drives the terminal
        return
    assert "␛" in out or "\\u241b" in out  # the marks are shown (in JSON, escaped)
    if "--json" not in args:
        assert "[link=https://evil.example]" in out  # shown as text, not read as markup


def test_the_html_report_escapes_and_links_nothing_a_model_wrote(
    project: Path, env: dict[str, str], hostile: list[Event], tmp_path: Path
) -> None:
    target = tmp_path / "report.html"
    code, _, err = _plait(project, env, "report", RUN_ID, "--html", "-o", str(target))
    assert code == 0, err
    page = target.read_text()
    _assert_safe(page, "the report")
    assert page.count("<script") == 1  # the report's own script, nothing else
    assert "javascript:" not in page.replace("&quot;javascript:", "") and "<img" not in page
    assert 'href="https://evil' not in page and "&lt;script&gt;alert(1)" in page
    assert "␛]52;c;ZXZpbA==␇" in page


def test_an_error_quoting_what_it_was_given_is_shown_as_marks(project: Path, env: dict[str, str]) -> None:
    (project / ".git" / "plait").mkdir()
    SQLiteEventStore(project / ".git" / "plait" / "events.db").close()
    code, out, err = _plait(project, env, "show", "\x1b]0;pwned\x07" + MARKUP)
    assert code == 2
    _assert_safe(out + err, "the error line")
    assert "no run '␛]0;pwned␇[link=https://evil.example]x[/link][reverse]'" in err


def test_the_live_view_shows_marks_and_no_markup(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    for event in _hostile_run("b" * 40, "c" * 40)[:7]:  # the run as it is at the `run` call in flight
        store.append(event)

    async def scenario() -> tuple[list[str], str, str, str]:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600)
        async with app.run_test(size=(200, 30)) as pilot:
            await pilot.pause()
            row = [c.plain if hasattr(c, "plain") else str(c) for c in app.query_one(DataTable).get_row("main")]
            board = screen_text(app)
            app.open_transcript("main")
            await pilot.pause()
            log = "\n".join(strip.text for strip in app.screen.query_one("#transcript", RichLog).lines)
            return row, board, log, screen_text(app)

    row, board, log, transcript = asyncio.run(scenario())
    _assert_safe("".join(row) + board + log + transcript, "the live view")
    title, now = row[1], row[3]
    assert title.startswith("[link=https://evil.example]") and now.startswith("run command=[link=https://evil")
    assert "␛[2J" in log and "[link=https://evil.example]x[/link]" in log
    store.close()


def test_progress_lines_show_marks_and_no_markup() -> None:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    printer = ProgressPrinter(console)
    for event in _hostile_run("b" * 40, "c" * 40):
        printer(event)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    _assert_safe(text, "progress lines")
    assert "[link=https://evil.example]" in text and "␛" in text


def test_a_reply_of_the_lead_shows_marks(capsys: pytest.CaptureFixture[str]) -> None:
    show_reply(Reply(turn=1, text=HOSTILE, ok=True))
    out = capsys.readouterr().out
    _assert_safe(out, "a session reply")
    assert "␛]52;c;ZXZpbA==␇" in out and MARKUP in out


SCRIPT = r"""
turns:
  - text: "Model text: \e[2J\e]0;pwned\a\x9b31m \u202eevil [link=https://evil.example]x[/link]"
    tool_calls:
      - name: write_file
        arguments: {path: evil.txt, content: "file \e]52;c;ZXZpbA==\a\x9d0;t\x9c over\rwrite\b\n"}
  - tool_calls: [{name: read_file, arguments: {path: evil.txt}}]
  - tool_calls:
      - name: run
        arguments:
          command: "printf 'out \\033[2J\\033]8;;https://evil.example\\007x\\n'; echo \"text \e]0;t\a\""
  - tool_calls: [{name: finish, arguments: {summary: "summary \e[2J\e]0;pwned\a \u202eevil [link=https://evil.example]x[/link]"}}]
"""


def test_a_real_run_prints_no_control_character_of_its_model_commands_or_files(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / "hostile.yaml"
    script.write_text(SCRIPT)
    code, out, err = _plait(project, env, "run", "write evil.txt", "--single", "--model", f"scripted:{script}")
    assert code == 0, err
    _assert_safe(out + err, "plait run")  # the progress lines and the summary line
    assert "summary ␛[2J␛]0;pwned␇ \\u202eevil [link=https://evil.example]x[/link]" in out
    for view in (["show", "last"], ["log", "last"], ["status", "--plain"], ["report", "last"]):
        code, shown, err = _plait(project, env, *view)
        assert code == 0, err
        _assert_safe(shown + err, f"plait {' '.join(view)}")
    code, shown, _ = _plait(project, env, "show", "last", "--full")
    for mark in (
        "Model text: ␛[2J",
        "file ␛]52;c;ZXZpbA==␇\\x9d0;t\\x9c over",
        "write␈",
        "out ␛[2J␛]8;;",
        "text ␛]0;t␇",
    ):
        assert mark in shown, mark
    code, out, err = _plait(
        project, env, "run", "write evil.txt", "--single", "--model", f"scripted:{script}", "--json"
    )
    assert code == 0, err
    _assert_safe(out + err, "plait run --json")
    assert json.loads(out)["summary"].startswith("summary \x1b[2J")  # JSON keeps the text, escaped


PLAN_SCRIPT = r"""
conversations:
  - match: "choose the mode for this task"
    turns:
      - tool_calls: [{name: choose_mode, arguments: {mode: parallel, reason: "two files"}}]
  - match: "Review this hostile plan"
    turns:
      - tool_calls:
          - name: submit_plan
            arguments:
              plan:
                mode: parallel
                reason: "reason \e[2J\e]0;pwned\a \u202eevil [link=https://evil.example]x[/link]"
                tasks:
                  - {id: one, title: "title \e]52;c;ZXZpbA==\a", instructions: "do \e[H one", writes: [one.py]}
                  - {id: two, title: "two \x9b31m", instructions: "do two", writes: [two.py]}
"""


def test_the_plan_put_to_the_user_for_review_shows_marks(project: Path, env: dict[str, str], tmp_path: Path) -> None:
    script = tmp_path / "plan.yaml"
    script.write_text(PLAN_SCRIPT)
    args = ["run", "Review this hostile plan", "--review", "--model", f"scripted:{script}"]
    done = run_in_process(tuple(args), project, env, "n\n")
    err = done.err
    assert done.code == 1 and "not accepted" in err, err
    _assert_safe(err + done.out, "the plan review")
    for mark in ("reason ␛[2J␛]0;pwned␇ \\u202eevil [link=https://evil.example]x[/link]", "title ␛]52;c;", "\\x9b31m"):
        assert mark in err, mark
