"""The gate's integration worktree kept between runs: moved to the next commit, not made anew; one run at a time."""

from __future__ import annotations

import asyncio
import fcntl
import subprocess
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.reconcile.gate import Gate

CHECKS_TWO = "grep -q two a.txt && test ! -e stray.txt"
"""Passes only on the second commit's tree, with nothing a run before left in it."""


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _gate(box: Sandbox, base: str, tmp_path: Path, run_id: str) -> Gate:
    assert box.repo is not None
    store = SQLiteEventStore(tmp_path / f"{run_id}.db")
    gate = Gate(box.repo, base=base, log=RunLog(store, run_id), verify_command=CHECKS_TWO)
    gate.share_worktree()
    return gate


def _head(path: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True).stdout.strip()


def test_the_next_run_verifies_in_the_kept_worktree_moved_to_its_commit(box: Sandbox, tmp_path: Path) -> None:
    base = box.start({"a.txt": "one\n"})
    two = box.commit({"a.txt": "two\n"}, parent=base)
    first = _gate(box, base, tmp_path, "r1")
    assert not asyncio.run(first.check(base)).passed
    kept = first.worktree.path
    (kept / "stray.txt").write_text("left by a test\n")
    (kept / ".venv").mkdir()
    (kept / ".venv" / "made").write_text("slow to make again\n")
    first.close()
    assert kept.is_dir() and (kept / ".venv" / "made").exists()

    second = _gate(box, base, tmp_path, "r2")
    result = asyncio.run(second.check(two))
    assert result.passed, result.output
    assert second.worktree.path == kept and _head(kept) == two
    assert (kept / ".venv" / "made").exists() and not (kept / "stray.txt").exists()
    second.close()


def test_a_run_that_finds_the_kept_worktree_in_use_makes_its_own_and_removes_it(box: Sandbox, tmp_path: Path) -> None:
    base = box.start({"a.txt": "one\n"})
    two = box.commit({"a.txt": "two\n"}, parent=base)
    holder = _gate(box, base, tmp_path, "r1")
    asyncio.run(holder.check(base))
    other = _gate(box, base, tmp_path, "r2")
    assert asyncio.run(other.check(two)).passed
    assert other.worktree.path != holder.worktree.path and _head(holder.worktree.path) == base
    own = other.worktree.path
    other.close()
    assert not own.exists() and holder.worktree.path.is_dir()
    holder.close()


def test_a_kept_worktree_whose_folder_was_deleted_is_made_again(box: Sandbox, tmp_path: Path) -> None:
    base = box.start({"a.txt": "one\n"})
    two = box.commit({"a.txt": "two\n"}, parent=base)
    first = _gate(box, base, tmp_path, "r1")
    asyncio.run(first.check(base))
    first.close()
    subprocess.run(["rm", "-rf", str(first.worktree.path)], check=True)
    second = _gate(box, base, tmp_path, "r2")
    assert asyncio.run(second.check(two)).passed
    assert _head(second.worktree.path) == two
    second.close()


def test_the_lock_is_let_go_when_the_gate_closes(box: Sandbox, tmp_path: Path) -> None:
    base = box.start({"a.txt": "one\n"})
    gate = _gate(box, base, tmp_path, "r1")
    asyncio.run(gate.check(base))
    lock = gate.worktree.path.parent.with_suffix(".lock")
    with lock.open("ab") as held:
        with pytest.raises(BlockingIOError):
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        gate.close()
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
