"""What only the PostgreSQL store has to get right: a shared server, connections that break, news by NOTIFY."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from pg_cluster import PASSWORD
from plait.errors import StateError
from plait.events import Decision, PostgresEventStore
from plait.events.postgres import LAYOUT
from plait.run.maintenance import diagnose
from plait.workspace import Repo
from plait.workspace.git import PLAIT_IDENTITY
from plait.workspace.scope import store_scope


def _decision(run_id: str, what: str = "d") -> Decision:
    return Decision(run_id=run_id, topic="t", decision=what)


def _sql(url: str, query: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(query.encode())
        return cur.fetchall() if cur.description else []


def test_a_killed_connection_loses_nothing_and_the_next_append_and_read_go_through(postgres_url: str) -> None:
    store = PostgresEventStore(postgres_url)
    for i in range(5):
        store.append(_decision("r1", str(i)))
    killed = _sql(
        postgres_url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    assert killed  # the store's pooled connection went
    store.append(_decision("r1", "5"))
    _sql(
        postgres_url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    events = store.events("r1")
    assert [e.decision for e in events if isinstance(e, Decision)] == [str(i) for i in range(6)]
    assert [e.seq for e in PostgresEventStore(postgres_url).events("r1")] == [e.seq for e in events]
    store.close()


def test_each_repository_lists_its_own_runs_and_reads_any_run(postgres_url: str) -> None:
    ours, theirs = PostgresEventStore(postgres_url, scope="aaa"), PostgresEventStore(postgres_url, scope="bbb")
    ours.append(_decision("r1"))
    theirs.append(_decision("r2"))
    ours.append(_decision("r3"))
    assert ours.run_ids() == ["r1", "r3"] and theirs.run_ids() == ["r2"]
    assert PostgresEventStore(postgres_url).run_ids() == ["r1", "r2", "r3"]
    assert [e.run_id for e in theirs.events("r1")] == ["r1"]  # a worker elsewhere appends to the run by its id
    ours.close()
    theirs.close()


def test_the_tables_are_versioned_made_once_and_a_newer_layout_is_refused(postgres_url: str) -> None:
    opened: list[PostgresEventStore] = []
    makers = [threading.Thread(target=lambda: opened.append(PostgresEventStore(postgres_url))) for _ in range(4)]
    for t in makers:
        t.start()
    for t in makers:
        t.join()
    assert len(opened) == 4  # all four raced to make the tables, none failed
    assert dict(_sql(postgres_url, "SELECT key, value FROM plait_meta"))["layout"] == str(LAYOUT)
    assert opened[0].integrity() == "ok"
    for store in opened:
        store.close()

    _sql(postgres_url, "ALTER TABLE plait_events DISABLE TRIGGER plait_event_order")
    assert "missing or disabled" in PostgresEventStore(postgres_url).integrity()
    _sql(postgres_url, f"UPDATE plait_meta SET value = '{LAYOUT + 1}' WHERE key = 'layout'")
    with pytest.raises(StateError, match=rf"laid out by a newer plait \(layout {LAYOUT + 1}\); upgrade plait"):
        PostgresEventStore(postgres_url)


def test_a_follower_is_woken_by_an_append_to_its_run_only(postgres_url: str) -> None:
    reader, writer = PostgresEventStore(postgres_url), PostgresEventStore(postgres_url)
    reader.wait("r1", 30)  # starts listening, at once
    writer.append(_decision("r2"))
    started = time.monotonic()
    reader.wait("r1", 0.5)
    assert time.monotonic() - started >= 0.5  # news of another run does not wake it
    appender = threading.Timer(0.2, lambda: writer.append(_decision("r1")))
    appender.start()
    started = time.monotonic()
    reader.wait("r1", 30)
    assert time.monotonic() - started < 10
    appender.join()
    reader.close()
    writer.close()


def test_an_unreachable_server_is_a_state_error_that_shows_no_password(tmp_path: Path) -> None:
    url = f"postgresql://someone:{PASSWORD}@/db?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StateError) as caught:
        PostgresEventStore(url)
    said = str(caught.value)
    assert f"cannot reach the event log postgresql://someone@{tmp_path}/db" in said
    assert PASSWORD not in said and "\n" not in said


def test_plait_with_the_sqlite_log_never_imports_psycopg() -> None:
    script = (
        "import sys, plait, plait.cli, plait.events\n"
        "from plait.events import SQLiteEventStore, open_event_store\n"
        "assert not [m for m in sys.modules if m.startswith('psycopg')], sorted(sys.modules)\n"
        "from plait.events import PostgresEventStore\n"
        "assert 'psycopg' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def _repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str) -> Repo:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("PLAIT_STORE", store)
    for key, value in PLAIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "a"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return Repo.discover(root)


def test_doctor_checks_the_server_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str) -> None:
    repo = _repo(tmp_path, monkeypatch, postgres_url)
    store = PostgresEventStore(postgres_url, scope=store_scope(repo))
    store.append(_decision("r1"))
    assert diagnose(repo) == []
    _sql(postgres_url, "INSERT INTO plait_events (run_id, agent, kind, ts, payload) VALUES ('r1', '', 'x', 0, '{')")
    (finding,) = diagnose(repo)
    assert finding.severity == "error" and "is not valid JSON" in finding.message and finding.repair is None
    store.close()


def test_doctor_says_when_the_server_cannot_be_reached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, monkeypatch, f"postgresql://me:{PASSWORD}@/db?host={tmp_path}&connect_timeout=2")
    (finding,) = diagnose(repo)
    assert finding.kind == "log" and finding.severity == "error" and "cannot reach the event log" in finding.message
    assert PASSWORD not in finding.message
