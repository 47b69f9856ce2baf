"""Blobs in the event log (checkpoint bundles any machine must reach), against SQLite and PostgreSQL alike."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_logs import Log

from plait.events import Decision, Event, SQLiteEventStore
from plait.events.store import ObservedStore, RedactingStore
from plait.redact import Redactor

EVERY_BYTE = bytes(range(256)) * 4


def _table(log: Log) -> str:
    return "plait_blobs" if log.location else "blobs"


def test_a_blob_comes_back_as_stored_and_a_missing_one_is_none(log: Log) -> None:
    store = log.open()
    store.put_blob("r1", "checkpoint/a", EVERY_BYTE)
    store.put_blob("r1", "empty", b"")
    store.put_blob("r2", "checkpoint/a", b"\x00other run\x00")

    assert store.get_blob("r1", "checkpoint/a") == EVERY_BYTE
    assert store.get_blob("r1", "empty") == b""
    assert store.get_blob("r2", "checkpoint/a") == b"\x00other run\x00"
    assert store.get_blob("r1", "checkpoint/b") is None
    assert store.get_blob("r3", "checkpoint/a") is None
    assert store.events("r1") == []  # blobs are not events
    store.close()


def test_a_key_stored_twice_keeps_one_blob(log: Log) -> None:
    store = log.open()
    store.put_blob("r1", "k", b"first")
    store.put_blob("r1", "k", b"first")
    store.put_blob("r1", "k", b"second")
    assert store.get_blob("r1", "k") == b"first"
    assert log.sql(f"SELECT COUNT(*) FROM {_table(log)} WHERE run_id = ? AND key = ?", "r1", "k") == [(1,)]
    store.close()


def test_a_blob_is_read_by_another_store_on_the_same_log(log: Log) -> None:
    writer = log.open()
    big = os.urandom(3 * 1024 * 1024)
    writer.put_blob("r1", "bundle", big)
    writer.close()
    reader = log.open()
    assert reader.get_blob("r1", "bundle") == big
    reader.close()


def test_wrapping_stores_pass_blobs_through_unredacted_and_tell_no_listener(log: Log) -> None:
    secret = "sk-live-0123456789abcdef"
    heard: list[Event] = []
    inner = log.open()
    store = ObservedStore(RedactingStore(inner, Redactor([secret], env={})), heard.append)
    data = f"a bundle that happens to hold {secret}".encode()

    store.put_blob("r1", "k", data)

    assert store.get_blob("r1", "k") == data
    assert inner.get_blob("r1", "k") == data
    assert heard == []
    store.append(Decision(run_id="r1", topic="t", decision=secret))
    assert secret not in heard[0].model_dump_json()  # events still are redacted
    store.close()


def test_a_log_from_before_blobs_gains_them_when_opened(log: Log) -> None:
    store = log.open()
    store.append(Decision(run_id="r1", topic="t", decision="kept"))
    store.close()
    log.sql(f"DROP TABLE {_table(log)}")
    if log.location:
        log.sql("UPDATE plait_meta SET value = '1' WHERE key = 'layout'")

    store = log.open()
    store.put_blob("r1", "k", b"data")

    assert store.get_blob("r1", "k") == b"data"
    assert [e.kind for e in store.events("r1")] == ["decision"]
    if log.location:
        from plait.events.postgres import LAYOUT

        assert LAYOUT == 2
        assert log.meta()["layout"] == str(LAYOUT)
    store.close()


def test_sqlite_syncs_a_blob_to_disk_before_it_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(str(Path(f"/proc/self/fd/{fd}").readlink()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    store.put_blob("r1", "k", b"data")
    assert str(tmp_path / "events.db-wal") in synced
    store.close()


def test_sqlite_without_a_write_ahead_log_keeps_blobs_too() -> None:
    store = SQLiteEventStore(":memory:")
    store.put_blob("r1", "k", b"data")
    assert store.get_blob("r1", "k") == b"data"
    store.close()
