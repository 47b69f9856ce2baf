"""`plait doctor` and `plait gc` on damage made for real: a garbled log, a deleted branch, leftovers."""

from __future__ import annotations

import sqlite3

from integrators import git

from plait.events import Committed, RunFinished, RunStarted, SQLiteEventStore, TaskStarted
from plait.run.maintenance import diagnose
from plait.workspace import Repo


def _started(run_id: str, repo: Repo) -> RunStarted:
    return RunStarted(run_id=run_id, task="t", repo=str(repo.root), base_commit=repo.head(), base_ref="main", model="m")


def test_a_healthy_repository_has_no_findings(repo: Repo) -> None:
    store = SQLiteEventStore(repo.plait_dir() / "events.db")
    store.append(_started("r1", repo))
    store.close()
    assert diagnose(repo) == []


def test_leftovers_of_an_ended_run_are_collected_with_the_disk_they_held(repo: Repo) -> None:
    store = SQLiteEventStore(repo.plait_dir() / "events.db")
    store.append(_started("r1", repo))
    store.append(RunFinished(run_id="r1", status="done"))
    store.close()
    repo.add_worktree(repo.plait_dir() / "worktrees" / "r1" / "a", "plait/r1/a", repo.head())
    stray = repo.plait_dir() / "worktrees" / "r1" / "b"
    stray.mkdir(parents=True)
    (stray / "big.bin").write_bytes(b"x" * 50_000)

    findings = diagnose(repo)
    assert sorted(f.kind for f in findings) == ["worktree", "worktree"]
    assert sum(f.freed for f in findings) >= 50_000
    for finding in findings:
        assert finding.repair is not None
        finding.repair()
    assert git(repo.root, "worktree", "list").count("\n") == 0 and not stray.exists()
    assert git(repo.root, "rev-parse", "plait/r1/a")  # the branch stays: it is the work
    assert diagnose(repo) == []


def test_the_worktree_plait_integrate_keeps_for_its_gate_is_not_called_a_leftover(repo: Repo) -> None:
    SQLiteEventStore(repo.plait_dir() / "events.db").close()
    kept = repo.plait_dir() / "worktrees" / "_gate" / "integration"
    git(repo.root, "worktree", "add", "--detach", str(kept), repo.head())

    (finding,) = diagnose(repo)

    assert finding.severity == "info" and "kept by plait integrate's gate for its next run" in finding.message
    assert "leftover" not in finding.message and finding.repair is not None
    finding.repair()  # plait gc may still take the space back: the next integrate makes it again
    assert not kept.exists()


def test_a_deleted_branch_of_an_unfinished_run_is_restored_from_the_log(repo: Repo) -> None:
    wt = repo.add_worktree(repo.plait_dir() / "worktrees" / "r1" / "a", "plait/r1/a", repo.head())
    (wt.path / "alpha.py").write_text("def alpha():\n    return 1\n")
    sha = wt.commit_all("work")
    assert sha
    wt.remove(delete_branch=True)
    store = SQLiteEventStore(repo.plait_dir() / "events.db")
    store.append(_started("r1", repo))
    store.append(TaskStarted(run_id="r1", agent="a", title="a", branch="plait/r1/a", worktree="", base_commit="x"))
    store.append(Committed(run_id="r1", agent="a", sha=sha, branch="plait/r1/a", message="work"))
    store.close()

    (finding,) = diagnose(repo)
    assert finding.kind == "branch" and "was deleted" in finding.message and finding.repair
    finding.repair()
    assert git(repo.root, "rev-parse", "plait/r1/a") == sha


def test_a_garbled_log_is_salvaged_keeping_every_readable_event_and_the_damaged_file(repo: Repo) -> None:
    path = repo.plait_dir() / "events.db"
    store = SQLiteEventStore(path)
    for i in range(5):
        store.append(_started(f"r{i}", repo))
    store.close()
    db = sqlite3.connect(path)
    db.execute("UPDATE events SET payload = '{broken' WHERE seq = 3")
    db.commit()
    db.close()

    (finding,) = diagnose(repo)
    assert finding.severity == "error" and "event 3" in finding.message and finding.repair
    message = finding.repair()
    assert "kept 4 event(s)" in message and "1 unreadable" in message
    assert SQLiteEventStore(path).run_ids() == ["r0", "r1", "r3", "r4"]
    kept_aside = [p for p in path.parent.glob("events.db.damaged-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(kept_aside) == 1


def test_a_file_that_is_not_a_database_is_moved_aside(repo: Repo) -> None:
    path = repo.plait_dir() / "events.db"
    path.write_bytes(b"garbage" * 1000)
    (finding,) = diagnose(repo)
    assert "damaged" in finding.message and finding.repair
    assert "kept 0 event(s)" in finding.repair()
    assert SQLiteEventStore(path).run_ids() == []
    assert any(p.read_bytes().startswith(b"garbage") for p in path.parent.glob("events.db.damaged-*"))
