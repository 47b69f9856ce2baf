"""A run killed at its very end leaves nothing behind once `plait resume` has seen it: the real CLI, real git."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cli_support import Plait, git

from plait.events import RunFinished, RunStarted, SQLiteEventStore

_SCRIPT = """\
turns:
  - tool_calls:
      - {name: write_file, arguments: {path: greet.py, content: "def greet(name):\\n    return 'hi ' + name\\n"}}
  - tool_calls:
      - {name: finish, arguments: {summary: greet says hi}}
"""


def _log(project: Path) -> Path:
    return project / ".git" / "plait" / "events.db"


def _leftovers(project: Path, run_id: str) -> tuple[list[str], str, str]:
    trees = project / ".git" / "plait" / "worktrees" / run_id
    left = sorted(p.name for p in trees.iterdir()) if trees.exists() else []
    refs = git(project, "for-each-ref", "--format=%(refname)", f"refs/plait/checkpoints/{run_id}/")
    return left, refs, git(project, "worktree", "list")


def test_resume_finishes_the_clean_up_of_a_run_killed_after_it_ended(plait: Plait, project: Path) -> None:
    store = SQLiteEventStore(_log(project))
    head = git(project, "rev-parse", "HEAD")
    store.append(RunStarted(run_id="r1", task="t", repo=str(project), base_commit=head, base_ref="main", model="m"))
    store.append(RunFinished(run_id="r1", status="done", branch="plait/r1/integration", commit=head))
    store.close()
    trees = project / ".git" / "plait" / "worktrees" / "r1"
    git(project, "worktree", "add", "--detach", str(trees / "_integration"), head)
    (trees / "a").mkdir()  # a task's worktree git already forgot
    (trees / "a" / "half.py").write_text("x = 1\n")
    git(project, "update-ref", "refs/plait/checkpoints/r1/a.1", head)

    first = plait("resume", "r1", cwd=project)
    assert first.code == 0, first.err
    assert "already ended (done)" in first.out and "clean-up" in first.out
    assert first.out.strip().count("\n") == 0
    assert _leftovers(project, "r1")[:2] == ([], "")
    assert _leftovers(project, "r1")[2].count("\n") == 0  # only the main worktree

    again = plait("resume", "r1", cwd=project)
    assert again.code == 0 and "nothing to resume" in again.out


def test_a_run_killed_right_after_its_last_commit_resumes_to_the_end_and_leaves_nothing(
    plait: Plait, project: Path
) -> None:
    (project / "script.yaml").write_text(_SCRIPT)
    git(project, "add", "script.yaml")
    git(project, "commit", "-q", "-m", "script")
    model = f"scripted:{project / 'script.yaml'}"
    done = plait("run", "Make greet say hi", "--single", "--model", model, "--json", "--yes", cwd=project)
    assert done.code == 0, done.err
    run_id = done.json()["run_id"]
    # the state a kill leaves between the commit and the worktree's removal: the log ends at the commit
    db = sqlite3.connect(_log(project))
    (cut,) = db.execute("SELECT max(seq) FROM events WHERE kind = 'commit'").fetchone()
    db.execute("DELETE FROM events WHERE seq > ?", (cut,))
    db.commit()
    db.close()
    stale = project / ".git" / "plait" / "worktrees" / run_id / "main"
    stale.mkdir(parents=True)
    (stale / "greet.py").write_text("leftover\n")
    git(project, "update-ref", f"refs/plait/checkpoints/{run_id}/main.1", done.json()["commit"])

    resumed = plait("resume", run_id, "--json", cwd=project)
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "done"
    assert _leftovers(project, run_id)[:2] == ([], "")
