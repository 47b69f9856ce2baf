"""An attempt's wrap-up names the files of its commit without asking git where its branch and the integration head
part when its branch took in no integrated work: the task's own files are then those changed since its base."""

from __future__ import annotations

from pathlib import Path

import pytest

from noting_git import noting_git
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import Committed
from plait.plan_model import PlanTask
from plait.run._wrapup import wrap_up
from plait.workspace import Repo


def test_a_wrap_up_names_the_tasks_files_without_a_merge_base(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worktree = repo.add_worktree(tmp_path / "wt", "plait/r1/alpha", repo.head())
    (repo.root / "other.py").write_text("x = 1\n")  # the integration head moves on meanwhile
    for args in (["add", "other.py"], ["commit", "-q", "-m", "integrated"]):
        repo.git(*args)
    (worktree.path / "alpha.py").write_text("def alpha():\n    return 1\n")
    (worktree.path / "new.py").write_text("y = 2\n")
    path, calls = noting_git(tmp_path)
    monkeypatch.setenv("PATH", path)
    store = SQLiteEventStore(tmp_path / "e.db")
    log = RunLog(store, "r1")
    task = PlanTask(id="alpha", title="alpha", instructions="x", writes=["alpha.py", "new.py"])

    sha = wrap_up(repo, log, worktree, task, None, number=1, head=repo.head())

    committed = [e for e in log.events(kinds=["commit"]) if isinstance(e, Committed)]
    assert [(c.sha, c.files) for c in committed] == [(sha, ["alpha.py", "new.py"])]
    assert " merge-base " not in f" {calls.read_text()}"
    store.close()
