"""Secrets never reach the event log: every string of every event is redacted before it is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.events.store import ObservedStore, RedactingStore, SQLiteEventStore, redaction
from plait.events.types import (
    AgentStopped,
    Decision,
    Event,
    ModelCallFailed,
    ModelCallFinished,
    NotePosted,
    PromptGiven,
    RunFinished,
    RunStarted,
    ToolCalled,
)
from plait.messages import ModelResponse, ToolCall
from plait.redact import Redactor, looks_secret

KEY = "sk-proj-Abc123def456ghi789jkl012"
"""A secret of a known shape."""
PAT = "Zq8mN3xW7pL2vK9tR4yB6cJ1"
"""A token in a variable whose name says nothing (GH_PAT here, but any name would do)."""
DB_PASSWORD = "hunter2pass"
ENV = {
    "GH_PAT": PAT,
    "DATABASE_URL": f"postgres://u:{DB_PASSWORD}@db.internal/app",
    "MY_SERVICE_CONFIG": "Xk29fjQ8slPq01mZ7vNa",
    "HOME": "/home/someone",
    "GIT_COMMIT": "0123456789abcdef0123456789abcdef01234567",
    "INVOCATION_ID": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "LANG": "en_US.UTF-8",
}
SECRETS = (KEY, PAT, DB_PASSWORD, "Xk29fjQ8slPq01mZ7vNa", "s3cr3tpass", "configured-key-Q1w2E3r4")


def test_the_redactor_knows_secrets_by_their_value_not_only_by_their_name() -> None:
    redact = Redactor(["configured-key-Q1w2E3r4"], env=ENV)
    text = (
        f"PAT {PAT}; url postgres://u:{DB_PASSWORD}@db.internal/app; bare {DB_PASSWORD}; "
        "clone https://bob:s3cr3tpass@git.example.com/x.git; redis://:s3cr3tpass@cache:6379/0; "
        "key configured-key-Q1w2E3r4; token Xk29fjQ8slPq01mZ7vNa"
    )
    shown = redact(text)
    for secret in SECRETS:
        assert secret not in shown, secret
    assert "https://bob:[REDACTED]@git.example.com/x.git" in shown
    assert redact(shown) == shown  # redacting again changes nothing: a resumed run redacts what it reads back
    # what is not secret stays readable
    kept = "/home/someone 0123456789abcdef0123456789abcdef01234567 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    kept += " en_US.UTF-8 http://localhost:8080/path@x"
    assert redact(kept) == kept


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        (PAT, True),
        (KEY, True),
        ("AKIAIOSFODNN7EXAMPLE", True),
        ("/usr/local/bin:/usr/bin", False),
        ("0123456789abcdef0123456789abcdef01234567", False),
        ("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", False),
        ("en_US.UTF-8", False),
        ("truecolor", False),
    ],
)
def test_what_looks_like_a_credential(value: str, secret: bool) -> None:
    assert looks_secret(value) is secret


def _events(run_id: str) -> list[Event]:
    ids = {"run_id": run_id, "agent": "main"}
    reply = ModelResponse(
        text=f"I will use {KEY} and {PAT}",
        tool_calls=(ToolCall.parse("c1", "run", {"command": f"echo {KEY} https://bob:s3cr3tpass@h/x"}),),
    )
    return [
        RunStarted(
            run_id=run_id,
            task=f"deploy with DATABASE_URL=postgres://u:{DB_PASSWORD}@db.internal/app and {PAT}",
            repo="/repo",
            base_commit="0" * 40,
            base_ref="main",
            model="scripted:x",
            settings={"setup_command": f"npm ci --token={KEY}", "max_steps": 5},
        ),
        PromptGiven(**ids, system="s", user=f"task {PAT}", tools=["run"]),
        ModelCallFinished(**ids, call=1, req_hash="h", response=reply),
        ToolCalled(**ids, call=reply.tool_calls[0], step=1),
        ModelCallFailed(**ids, call=2, error=f"HTTP 401: bad key configured-key-Q1w2E3r4 ({KEY})"),
        NotePosted(**ids, topic="finding", text=f"the password is {DB_PASSWORD}"),
        Decision(**ids, topic="notes", decision="delivered", data={"notes": [f"use {PAT}"], KEY: 1}),
        AgentStopped(**ids, reason="finished", summary=f"done; token was Xk29fjQ8slPq01mZ7vNa and {KEY}"),
        RunFinished(run_id=run_id, status="done", reason=f"finished with {PAT}"),
    ]


def _raw(db: Path) -> bytes:
    """Every byte SQLite wrote: the database, its write-ahead log and its index."""
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_no_secret_reaches_the_bytes_of_the_log(tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    seen: list[Event] = []
    redact = Redactor(["configured-key-Q1w2E3r4"], env=ENV)
    store = ObservedStore(RedactingStore(SQLiteEventStore(db), redact), seen.append)
    for event in _events("r1"):
        store.append(event)
    raw = _raw(db)
    for secret in SECRETS:
        assert secret.encode() not in raw, secret
    assert b"[REDACTED]" in raw
    stored = store.events("r1")
    assert [e.kind for e in stored] == [e.kind for e in _events("r1")]
    assert all(e.agent in ("", "main") for e in stored)  # what an event is filed under is never rewritten
    assert seen == stored  # listeners (progress lines) are told of the event as written
    stopped = stored[-2]
    assert isinstance(stopped, AgentStopped) and stopped.reason == "finished"
    store.close()


def test_a_secret_equal_to_a_word_of_the_format_does_not_break_the_event(tmp_path: Path) -> None:
    store = RedactingStore(SQLiteEventStore(tmp_path / "events.db"), Redactor(env={"ODD_TOKEN": "finished"}))
    stored = store.append(AgentStopped(run_id="r", agent="main", reason="finished", summary="all finished"))
    assert isinstance(stored, AgentStopped) and stored.reason == "finished" and stored.summary == "all [REDACTED]"


def test_an_agent_finds_the_redaction_of_the_store_it_writes_to(tmp_path: Path) -> None:
    inner = SQLiteEventStore(tmp_path / "events.db")
    redact = Redactor([KEY], env={})
    assert redaction(ObservedStore(RedactingStore(inner, redact))) is redact
    assert redaction(inner)(KEY) == KEY
    inner.close()
