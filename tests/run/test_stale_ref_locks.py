"""`plait doctor` finds the ref locks a killed git left under plait's refs, and removes only those."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from integrators import git

from plait.events import RunStarted, SQLiteEventStore
from plait.run.maintenance import diagnose
from plait.workspace import Repo


def _lock(path: Path, *, age: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("0" * 40 + "\n")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_stale_locks_under_plaits_refs_are_reported_and_removed_and_no_others(repo: Repo) -> None:
    store = SQLiteEventStore(repo.plait_dir() / "events.db")
    head = repo.head()
    store.append(RunStarted(run_id="r1", task="t", repo=str(repo.root), base_commit=head, base_ref="main", model="m"))
    store.close()
    git(repo.root, "branch", "plait/r1/a", head)
    refs = repo.common_dir / "refs"
    branch = _lock(refs / "heads" / "plait" / "r1" / "a.lock", age=3600)
    checkpoint = _lock(refs / "plait" / "checkpoints" / "r1" / "a.1.lock", age=3600)
    fresh = _lock(refs / "heads" / "plait" / "r1" / "b.lock", age=0)  # a git at work right now
    users = _lock(refs / "heads" / "feature.lock", age=3600)  # not plait's to judge
    blocked = subprocess.run(["git", "branch", "-f", "plait/r1/a", head], cwd=repo.root, capture_output=True, text=True)
    assert blocked.returncode != 0 and "File exists" in blocked.stderr

    findings = diagnose(repo)
    assert sorted(f.message.split()[2] for f in findings) == [
        "refs/heads/plait/r1/a.lock",
        "refs/plait/checkpoints/r1/a.1.lock",
    ]
    for finding in findings:
        assert finding.kind == "lock" and finding.repair is not None
        finding.repair()
    assert not branch.exists() and not checkpoint.exists() and fresh.exists() and users.exists()
    fresh.unlink()
    git(repo.root, "branch", "-f", "plait/r1/a", head)  # the branch can move again
    assert diagnose(repo) == []
