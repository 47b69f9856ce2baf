"""A power cut: what the SQLite log promised was synced is still there, and `plait doctor` reports what was lost.

A real power cut cannot be made here. Two things can be observed honestly instead: that appending an answered
model call syncs the log to disk (the system calls, seen by strace), and what SQLite and `plait doctor` make of
the files a power cut leaves, the write-ahead log cut off mid-frame after the last synced write.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plait.events import ModelCallFinished, RunStarted, SQLiteEventStore, ToolCalled
from plait.messages import ModelResponse, ToolCall
from plait.run.maintenance import diagnose
from plait.workspace import Repo
from plait.workspace.git import PLAIT_IDENTITY

FRAME = 24 + 4096  # a WAL frame of a page of the default size


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for key, value in PLAIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("A = 1\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return Repo.discover(root)


def _answer(call: int) -> ModelCallFinished:
    response = ModelResponse(text="I will look first. " * 20, tool_calls=(ToolCall.parse(f"c{call}", "finish", {}),))
    return ModelCallFinished(run_id="r1", agent="a", call=call, req_hash="h" * 64, response=response)


def _tool(call: int) -> ToolCalled:
    return ToolCalled(run_id="r1", agent="a", call=ToolCall.parse(f"c{call}", "read_file", {"path": "x.py"}))


_SYNCS = """
from plait.events import ModelCallFinished, SQLiteEventStore, ToolCalled
from plait.messages import ModelResponse, ToolCall
store = SQLiteEventStore({db!r})
def _answer(call):
    response = ModelResponse(text="I will look first.", tool_calls=(ToolCall.parse(f"c{{call}}", "finish", {{}}),))
    return ModelCallFinished(run_id="r1", agent="a", call=call, req_hash="h", response=response)
def _tool(call):
    return ToolCalled(run_id="r1", agent="a", call=ToolCall.parse(f"c{{call}}", "read_file", {{"path": "x.py"}}))
store.append(_tool(0))
print("BEGIN", flush=True)
for call in range(20):
    store.append({make}(call))
print("END", flush=True)
"""


def _syncs_for(kind: str, tmp_path: Path) -> int:
    """fsync/fdatasync calls made while 20 events of `kind` are appended, counted by strace."""
    script = _SYNCS.format(db=str(tmp_path / f"{kind}.db"), make=kind)
    trace = tmp_path / f"{kind}.trace"
    subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync,write", "-o", str(trace), sys.executable, "-c", script],
        check=True,
        capture_output=True,
    )
    lines = trace.read_text().splitlines()
    begin = next(i for i, line in enumerate(lines) if "BEGIN" in line)
    end = next(i for i, line in enumerate(lines) if "END" in line)
    return sum("sync(" in line for line in lines[begin:end])


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to see the system calls")
def test_an_answered_model_call_is_synced_to_disk_before_append_returns(tmp_path: Path) -> None:
    probe = subprocess.run(["strace", "-qq", "-e", "trace=none", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("strace cannot trace here")
    assert _syncs_for("_answer", tmp_path) >= 20
    assert _syncs_for("_tool", tmp_path) == 0  # the cheap ones are not synced one by one


def _cut(wal: Path, synced_size: int) -> None:
    """The write-ahead log as a power cut may leave it: whole up to its last sync, then cut mid-frame."""
    size = wal.stat().st_size
    assert size >= synced_size + 2 * FRAME  # some writes after the sync, to lose
    with wal.open("r+b") as f:
        f.truncate(synced_size + FRAME + FRAME // 2)


def test_a_cut_write_ahead_log_keeps_every_synced_event_and_doctor_reports_the_loss(repo: Repo) -> None:
    path = repo.common_dir / "plait" / "events.db"
    wal = path.with_name("events.db-wal")
    store = SQLiteEventStore(path)
    store.append(
        RunStarted(run_id="r1", task="t", repo=str(repo.root), base_commit=repo.head(), base_ref="main", model="m")
    )
    for call in range(10):
        store.append(_answer(call))
        store.append(_tool(call))
    store.append(_answer(10))
    synced, synced_size = store.synced, wal.stat().st_size
    assert synced == 22  # the last answer
    for call in range(11, 15):
        store.append(_tool(call))
    power_cut = path.parent / "at-the-cut"
    power_cut.mkdir()
    for name in ("events.db", "events.db-wal"):  # the files as they are on disk, the store still open
        shutil.copy(path.parent / name, power_cut / name)
    store.close()
    for name in ("events.db", "events.db-wal"):
        shutil.copy(power_cut / name, path.parent / name)
    path.with_name("events.db-shm").unlink(missing_ok=True)
    _cut(wal, synced_size)

    findings = diagnose(repo)
    assert [f.kind for f in findings] == ["log"]
    assert "cut off" in findings[0].message and "lost" in findings[0].message

    events = SQLiteEventStore(path).events("r1")
    assert [e.seq for e in events][:synced] == list(range(1, synced + 1))
    assert len(events) < synced + 4  # what came after the sync was lost, and doctor said so


def test_a_whole_write_ahead_log_is_no_finding_after_sqlite_restarted_it(repo: Repo) -> None:
    path = repo.common_dir / "plait" / "events.db"
    store = SQLiteEventStore(path)
    store.append(
        RunStarted(run_id="r1", task="t", repo=str(repo.root), base_commit=repo.head(), base_ref="main", model="m")
    )
    sizes = []
    for call in range(1500):  # past a checkpoint: the log starts again at the top, older frames behind it
        store.append(_tool(call))
        sizes.append(path.with_name("events.db-wal").stat().st_size)
    assert sizes[-1] == max(sizes) and len(set(sizes[-50:])) == 1  # restarted, and no longer growing
    copy = path.parent / "copy"
    copy.mkdir()
    for name in ("events.db", "events.db-wal"):
        shutil.copy(path.parent / name, copy / name)
    store.close()
    for name in ("events.db", "events.db-wal"):
        shutil.copy(copy / name, path.parent / name)
    path.with_name("events.db-shm").unlink(missing_ok=True)

    assert diagnose(repo) == []
    assert len(SQLiteEventStore(path).events("r1")) == 1501
