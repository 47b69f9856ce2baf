"""A log written before the typed events (schema 1) reads as one written today: its decisions that resume and the
views read back (leases, notes delivered, compactions, what the user said to a lead and its replies) become their
events in the decoder, so the run resumes and is shown as if it had been written with them."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from plait.agent._replay import AttemptRecord
from plait.coord.board import Board
from plait.coord.leases import Leases
from plait.events import Event, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import (
    AgentSession,
    AttemptPlaced,
    ContextCompacted,
    DebtsChanged,
    Decision,
    LeadReplied,
    LeaseChanged,
    McpToolsListed,
    NotePosted,
    NotesDelivered,
    OwedTests,
    PlanMade,
    RunDispatched,
    RunKind,
    RunStarted,
    TaskStarted,
    UserSaid,
    VerifyChecked,
    WorkCarried,
    WorktreeOpening,
)
from plait.log_upgrade import upgrade
from plait.messages import ToolSpec
from plait.plan_model import Plan
from plait.reconcile._debts import Debts
from plait.redact import Redactor
from plait.run._lead import Transcript, run_kind
from plait.run._opening import logged_openings
from plait.run._retry import logged_carried
from plait.ui._fast_events import read_events
from plait.ui._log_lines import log_line
from plait.ui._placement import placements
from plait.ui._reduce import RunView
from plait.ui.transcript import render_transcript

RUN = "20260101-000000-0ld0"
NOTE = "[api] from api:\nsignature: post(entry) -> int"
UNTIL = 4102444800.0
ASKED = "an investigation: read-only agents answer a question"
PLACED = "attempt 1 runs on node n1 (w1)"
OPENED = "making the worktree of attempt 2 on cccccccccc"
OPENING = {"attempt": 2, "branch": "b/api.2", "path": "/w/api.2", "base": "c" * 40}
CARRIED = {"attempt": 2, "number": 1, "commit": "", "head": "", "files": [], "conflicts": []}
SESSION = {"session": "s1", "attempt": 2, "model": "opus"}
LISTED = "started 1 MCP server(s) offering 1 tool(s)"
TOOL = ToolSpec(name="mcp__notes__add", description="[MCP server notes] add a note", parameters={"type": "object"})
VERIFIED = "verify command `make test` passes at the base; the gate runs it on the agents' work"
PLAN = Plan.model_validate(
    {
        "mode": "parallel",
        "reason": "two parts",
        "tasks": [
            {"id": "api", "title": "api", "instructions": "i", "writes": ["api.py"]},
            {"id": "ui", "title": "ui", "instructions": "i", "writes": ["ui.py"]},
        ],
    }
)


def _ids(agent: str, ts: float) -> dict[str, Any]:
    return {"run_id": RUN, "agent": agent, "ts": ts}


def _common() -> list[Event]:
    """What both forms of the log hold alike (a plan was logged as its JSON then too)."""
    return [
        RunStarted(**_ids("", 1.0), task="t", repo="/r", base_commit="c" * 40, base_ref="main", model="m"),
        PlanMade(**_ids("planner", 1.5), plan=PLAN),
        TaskStarted(**_ids("api", 2.0), title="api", branch="b/api", worktree="/w/api", base_commit="c" * 40),
        TaskStarted(**_ids("ui", 2.5), title="ui", branch="b/ui", worktree="/w/ui", base_commit="c" * 40),
        NotePosted(**_ids("api", 3.0), topic="api", text="signature: post(entry) -> int"),
    ]


def _decision(agent: str, ts: float, topic: str, decision: str, reason: str, data: dict[str, Any]) -> dict[str, Any]:
    """A decision's row as schema 1 wrote it: `Decision(...).model_dump_json(exclude={"seq"})`."""
    ids = {"v": 1, "run_id": RUN, "agent": agent, "ts": ts, "kind": "decision"}
    return {**ids, "topic": topic, "decision": decision, "reason": reason, "data": data}


def _old_rows() -> list[dict[str, Any]]:
    """The decisions of schema 1, each with the `data` its writer gave it."""
    lease = {"path": "README.md", "task": "ui", "holder": "api", "why": "document it"}
    compacted = {"messages_before": 9, "messages_after": 4, "tokens_before": 900, "tokens_after": 300}
    return [
        _decision("ui", 4.0, "lease", "waits for api", "document it", {**lease, "action": "wait", "until": 0.0}),
        _decision(
            "ui",
            5.0,
            "lease",
            "claimed README.md after api finished",
            "document it",
            {**lease, "holder": "ui", "action": "claim", "until": UNTIL, "after": ["api"]},
        ),
        _decision("ui", 6.0, "notes", "delivered 1 note(s)", "", {"notes": [NOTE], "step": 2, "attempt": 1}),
        _decision(
            "ui",
            7.0,
            "context",
            "summarised steps 1-2: 9 messages (~900 tokens) became 4 (~300 tokens)",
            "the request neared 1000 of the model's 2000 context tokens",
            {**compacted, "summarised": 2, "step": 3, "attempt": 1, "budget": 2000},
        ),
        _decision("lead", 8.0, "question", "message 1 from the user", "", {"turn": 1, "text": "Where is it saved?"}),
        _decision(
            "lead",
            9.0,
            "reply",
            "reply 1 to the user",
            "",
            {"turn": 1, "text": "In ledger.db.", "ok": True, "disagreements": ""},
        ),
        _decision("", 9.5, "kind", f"this run is {ASKED}", "", {"kind": "investigation"}),
        _decision("api", 9.6, "placed", PLACED, "", {"node": "n1", "host": "w1", "attempt": 1}),
        _decision("", 9.7, "verify", VERIFIED, "", {"commit": "c" * 40, "command": "make test", "state": "passes"}),
        _decision("lead", 9.8, "dispatch", "dispatched run r2", "", {"run": "r2", "task": "t", "plan": "", "key": "k"}),
        _decision("api", 9.85, "worktree", OPENED, "", {**OPENING, "why": "", "detail": ""}),
        _decision(
            "api", 9.9, "retry", "kept nothing", "gone", {**CARRIED, "put_back": [["x.py", "ui"]], "lost": "gone"}
        ),
        _decision("", 9.95, "gate-debts", "no test owed", "", {"debts": [{"tests": ["t"], "by": "api", "until": []}]}),
        _decision("api", 9.97, "external_agent", "claude-code session s1", "", {**SESSION, "agent": "claude-code"}),
        _decision(
            "api", 9.98, "mcp", LISTED, "", {"attempt": 2, "tools": [TOOL.model_dump(mode="json")], "failed": {}}
        ),
        _decision("", 10.0, "mode", "one agent, no parallel overhead", "small", {}),
    ]


def _new_events() -> list[Event]:
    """The same decisions as today's writers log them."""
    lease = {"path": "README.md", "task": "ui", "why": "document it", "reason": "document it"}
    return [
        LeaseChanged(**_ids("ui", 4.0), **lease, holder="api", action="wait", decision="waits for api"),
        LeaseChanged(
            **_ids("ui", 5.0),
            **lease,
            holder="ui",
            action="claim",
            until=UNTIL,
            after=["api"],
            decision="claimed README.md after api finished",
        ),
        NotesDelivered(**_ids("ui", 6.0), decision="delivered 1 note(s)", notes=[NOTE], step=2, attempt=1),
        ContextCompacted(
            **_ids("ui", 7.0),
            decision="summarised steps 1-2: 9 messages (~900 tokens) became 4 (~300 tokens)",
            reason="the request neared 1000 of the model's 2000 context tokens",
            **{"messages_before": 9, "messages_after": 4, "tokens_before": 900, "tokens_after": 300},
            **{"summarised": 2, "step": 3, "attempt": 1, "budget": 2000},
        ),
        UserSaid(
            **_ids("lead", 8.0), topic="question", decision="message 1 from the user", turn=1, text="Where is it saved?"
        ),
        LeadReplied(**_ids("lead", 9.0), decision="reply 1 to the user", turn=1, text="In ledger.db.", ok=True),
        RunKind(**_ids("", 9.5), decision=f"this run is {ASKED}", what="investigation"),
        AttemptPlaced(**_ids("api", 9.6), decision=PLACED, node="n1", host="w1", attempt=1),
        VerifyChecked(**_ids("", 9.7), decision=VERIFIED, commit="c" * 40, command="make test", state="passes"),
        RunDispatched(**_ids("lead", 9.8), decision="dispatched run r2", run="r2", task="t", key="k"),
        WorktreeOpening(**_ids("api", 9.85), decision=OPENED, **OPENING),
        WorkCarried(
            **_ids("api", 9.9),
            decision="kept nothing",
            reason="gone",
            **CARRIED,
            put_back=[["x.py", "ui"]],
            lost="gone",
        ),
        DebtsChanged(**_ids("", 9.95), decision="no test owed", debts=[OwedTests(tests=["t"], by="api")]),
        AgentSession(**_ids("api", 9.97), decision="claude-code session s1", **SESSION, cli="claude-code"),
        McpToolsListed(**_ids("api", 9.98), decision=LISTED, attempt=2, tools=[TOOL]),
        Decision(**_ids("", 10.0), topic="mode", decision="one agent, no parallel overhead", reason="small"),
    ]


@pytest.fixture
def old_log(tmp_path: Path) -> Path:
    """A log of schema 1: its rows as that plait inserted them (kind column `decision`)."""
    path = tmp_path / "old.db"
    store = SQLiteEventStore(path)
    for event in _common():
        store.append(event.model_copy(update={"v": 1}))
    store.close()
    with sqlite3.connect(path) as db:
        for row in _old_rows():
            db.execute(
                "INSERT INTO events (run_id, agent, kind, ts, payload) VALUES (?, ?, ?, ?, ?)",
                (RUN, row["agent"], "decision", row["ts"], json.dumps(row)),
            )
    return path


@pytest.fixture
def new_log(tmp_path: Path) -> Path:
    path = tmp_path / "new.db"
    store = SQLiteEventStore(path)
    for event in [*_common(), *_new_events()]:
        store.append(event)
    store.close()
    return path


def test_an_old_decision_is_read_as_the_event_written_today(old_log: Path, new_log: Path) -> None:
    old, new = SQLiteEventStore(old_log).events(RUN), SQLiteEventStore(new_log).events(RUN)
    assert [e.kind for e in old[5:]] == ["lease", "lease", "notes_delivered", "compacted"] + [
        *(
            "user_said",
            "lead_replied",
            "run_kind",
            "placed",
            "verify",
            "dispatched",
            "opening",
            "carried",
            "debts",
            "agent_session",
            "mcp_tools",
            "decision",
        ),
    ]
    assert old == new
    assert [e.plan for e in old if isinstance(e, PlanMade)] == [PLAN]  # a plan logged as JSON reads as one


def test_the_kinds_asked_for_find_the_old_rows_of_them_and_no_others(old_log: Path) -> None:
    store = SQLiteEventStore(old_log)
    assert [e.kind for e in store.events(RUN, kinds=["lease", "note"])] == ["note", "lease", "lease"]
    assert [e.topic for e in store.events(RUN, kinds=["decision"]) if isinstance(e, Decision)] == ["mode"]
    assert [e.kind for e in store.events(RUN, agent="lead", kinds=["lead_replied"])] == ["lead_replied"]


def test_a_run_of_an_old_log_resumes_where_it_stood(old_log: Path) -> None:
    store = SQLiteEventStore(old_log)
    claim = Leases.from_log(RunLog(store, RUN), PLAN).claims["README.md"]
    assert (claim.task, claim.until, claim.after) == ("ui", UNTIL, ("api",))
    assert Board.from_log(RunLog(store, RUN), PLAN).take("ui") == []  # the note was delivered before the process died
    record = AttemptRecord(RunLog(store, RUN), "ui", 1)
    assert record.notes == {2: [NOTE]} and record.compactions == {3}
    transcript = Transcript(RunLog(store, RUN), "question")
    assert [(s.turn, s.text) for s in transcript.messages] == [(1, "Where is it saved?")]
    assert set(transcript.replies) == {1}
    assert run_kind(RunLog(store, RUN)) == "investigation"
    assert placements(store.events(RUN)) == {"api": ("n1", "w1")}
    assert logged_openings(RunLog(store, RUN))[("api", 2)].branch == "b/api.2"
    carried = logged_carried(RunLog(store, RUN), "api", 2)
    assert carried is not None and (carried.number, carried.put_back, carried.lost) == (1, (("x.py", "ui"),), "gone")
    assert [(d.tests, d.by) for d in Debts(RunLog(store, RUN)).debts] == [(frozenset({"t"}), "api")]


def _shown(path: Path) -> tuple[list[str], list[str], str, list[Any]]:
    events = SQLiteEventStore(path).events(RUN)
    fast = read_events(path, RUN, Redactor([]))
    assert fast is not None, "the fast reader gave the old log up"
    lines = [log_line(e, 0.0) for e in events]
    fast_lines = [log_line(e, 0.0) for e in fast]  # type: ignore[arg-type]
    out = io.StringIO()
    render_transcript(Console(file=out, width=100), RUN, events)
    view = RunView(RUN)
    view.apply(events)
    folded = [view.agents["ui"].claims, [(w.path, w.holder) for w in view.waits], [d.topic for d in view.decisions]]
    return lines, fast_lines, out.getvalue(), [*folded, view.kind]


def test_an_old_log_is_shown_as_a_new_one_is(old_log: Path, new_log: Path) -> None:
    old, new = _shown(old_log), _shown(new_log)
    assert old == new
    lines, fast_lines, transcript, [*folded, kind] = old
    assert fast_lines == lines
    assert "lease: claimed README.md after waiting for api (document it)" in "\n".join(lines)
    assert "the user, question 1" in transcript
    assert folded == [
        ["README.md"],
        [("README.md", "api")],
        ["lease", "lease", "notes", "context", "question", "reply", "kind", "placed", "verify", "dispatch"]
        + ["worktree", "retry", "gate-debts", "external_agent", "mcp", "mode"],
    ]
    assert kind == "investigation"


def test_a_row_of_this_schema_is_left_as_it_is() -> None:
    row = _new_events()[0].model_dump(mode="json")
    assert upgrade(row) is row
    assert upgrade([1]) == [1]
