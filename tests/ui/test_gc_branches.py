"""`plait gc` through the real CLI: the branches ended runs no longer need go, the others stay with why."""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait, git

from plait.events.store import SQLiteEventStore
from plait.events.types import Decision, RunFinished, RunStarted


def _branch_with_commit(project: Path, branch: str, base: str) -> None:
    git(project, "branch", branch, base)
    git(project, "checkout", "-q", branch)
    (project / f"{branch.replace('/', '_')}.txt").write_text(branch + "\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", branch)
    git(project, "checkout", "-q", "main")


def _runs(project: Path) -> None:
    """Five runs: failed before any commit, applied, done and not applied, unfinished, failed with work."""
    base = git(project, "rev-parse", "HEAD")
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    for run in ("ra", "rb", "rc", "rd", "re"):
        store.append(RunStarted(run_id=run, task="t", repo=str(project), base_commit=base, base_ref="main", model="m"))
    git(project, "branch", "plait/ra/main", base)
    store.append(RunFinished(run_id="ra", status="failed", reason="the model refused the key"))
    for run in ("rb", "rc"):
        _branch_with_commit(project, f"plait/{run}/t1", base)
        git(project, "branch", f"plait/{run}/integration", f"plait/{run}/t1")
        store.append(RunFinished(run_id=run, status="done", branch=f"plait/{run}/integration"))
    store.append(Decision(run_id="rb", topic="apply", decision="fast-forward of main"))
    _branch_with_commit(project, "plait/rd/t1", base)
    _branch_with_commit(project, "plait/re/t1", base)
    store.append(RunFinished(run_id="re", status="failed", reason="the gate failed"))
    store.close()


def _branches(project: Path) -> set[str]:
    return set(git(project, "for-each-ref", "--format=%(refname:short)", "refs/heads/plait/").split())


def test_gc_removes_spent_branches_keeps_the_rest_and_says_why(plait: Plait, project: Path) -> None:
    _runs(project)
    before = _branches(project)
    assert len(before) == 7
    dry = plait("gc", "--dry-run", cwd=project)
    assert dry.code == 0, dry.err
    assert _branches(project) == before, "--dry-run removes nothing"
    assert "would remove:" in dry.out and "plait/ra/main" in dry.out and "plait/rb/t1" in dry.out
    done = plait("gc", cwd=project)
    assert done.code == 0, done.err
    assert before - _branches(project) == {"plait/ra/main", "plait/rb/t1"}
    assert "removed branch plait/ra/main (no commit on it" in done.out
    assert "kept 5 plait branch(es)" in done.out
    assert "plait/rb/integration: the run's result" in done.out
    assert "plait/rc/t1: run not applied yet: `plait review rc`" in done.out
    assert "plait/rd/t1: run unfinished: `plait resume rd` needs it" in done.out
    assert "plait/re/t1: the only copy of the work of a failed run" in done.out
    again = plait("gc", "--json", cwd=project).json()
    assert again["removed"] == [] and len(again["kept"]) == 5
