"""`plait doctor` and `plait gc`: find what crashes and hand edits left behind, and repair what is safe; gc also
removes the branches ended runs no longer need."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from plait.errors import PlaitError, StateError
from plait.events.backends import open_event_store
from plait.events.runlog import RunLog
from plait.events.store import EventStore, SQLiteEventStore, wal_damage
from plait.events.types import Decision
from plait.plan_model import PLANNING_FAILED
from plait.run._branch_gc import BranchVerdict, judge_branches
from plait.run._salvage import salvage_rows
from plait.run.state import RunState, load_state
from plait.settings import load_settings
from plait.workspace import Repo
from plait.workspace._mounts import close_layered, unmount_under
from plait.workspace.git import worktree_lock
from plait.workspace.scope import store_scope

__all__ = ["BranchVerdict", "Finding", "collect", "diagnose", "disk_usage", "ended_note", "salvage_log", "tidy_run"]

_STALE_LOCK_S = 60.0
"""Age past which a `.lock` under plait's refs is a killed git's: git holds one only while it updates the ref."""


@dataclass
class Finding:
    """One problem: what it is, how bad, and the repair (None when only a person should decide)."""

    kind: str
    message: str
    severity: str = "warning"
    repair: Callable[[], str] | None = None
    freed: int = 0


def disk_usage(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                continue
    return total


def salvage_log(path: Path) -> str:
    """Copy every event of a damaged log that still reads into a fresh one; the damaged file is kept beside it."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(aside.with_name(aside.name + suffix))
    fresh = SQLiteEventStore(path)
    fresh.close()
    target = sqlite3.connect(path)
    try:
        blobs: list[str] = []

        def keep_blob(blob: tuple[str, str, bytes]) -> None:
            target.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?)", blob)
            blobs.append(blob[1])

        kept, total = salvage_rows(
            aside, lambda row: target.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", row), keep_blob
        )
        target.commit()
    finally:
        target.close()
    return (
        f"kept {kept} event(s) of {total} in a fresh log, {total - kept} unreadable, and {len(blobs)} blob(s); "
        f"the damaged file is {aside.name}"
    )


def _log_findings(path: Path) -> tuple[list[Finding], SQLiteEventStore | None]:
    cut = wal_damage(path)  # before SQLite opens the log, which drops such a tail without a word
    try:
        store = SQLiteEventStore(path)
        check = store.integrity()
        for run_id in store.run_ids():
            store.events(run_id)
    except StateError as exc:
        return [Finding("log", str(exc), "error", lambda: salvage_log(path))], None
    if check != "ok":
        store.close()
        return [
            Finding("log", f"the event log fails its integrity check: {check}", "error", lambda: salvage_log(path))
        ], None
    return [Finding("log", cut)] if cut else [], store


@runtime_checkable
class _Checked(Protocol):
    def integrity(self) -> str: ...


def _server_findings(location: str, scope: str) -> tuple[list[Finding], EventStore | None]:
    """A server store: reachable, its tables of this plait's layout, every run of this repository readable."""
    try:
        store = open_event_store(location, Path(), scope=scope)
    except PlaitError as exc:  # unreachable, refused, laid out by a newer plait, psycopg missing
        return [Finding("log", str(exc), "error")], None
    try:
        check = store.integrity() if isinstance(store, _Checked) else "ok"
        for run_id in store.run_ids() if check == "ok" else []:
            store.events(run_id)
    except StateError as exc:
        check = str(exc)
    if check != "ok":
        store.close()
        return [Finding("log", f"the event log fails its check: {check}", "error")], None
    return [], store


def _remove_tree(repo: Repo, tree: Path, registered: set[Path]) -> None:
    """Delete a worktree's directory and git's record of it, whether git still knows it or not."""
    close_layered(tree)
    if tree.absolute() in registered:
        with worktree_lock(repo.common_dir):
            repo.git("worktree", "remove", "--force", "--force", str(tree), check=False)
    if tree.is_dir() and not tree.is_symlink():
        shutil.rmtree(tree, ignore_errors=True)
    else:
        tree.unlink(missing_ok=True)


def tidy_run(repo: Repo, run_id: str) -> list[str]:
    """Finish the clean-up of an ended run: its worktrees (the gate's too) and checkpoint refs; what was removed.

    Its branches stay: they are the work.
    """
    done: list[str] = []
    root = repo.common_dir / "plait" / "worktrees" / run_id
    if root.is_dir():
        unmount_under(root)  # layered worktrees: their mounts first, or deleting would go through them
        registered = set(repo.worktrees())
        for tree in sorted(root.iterdir()):
            _remove_tree(repo, tree, registered)
            done.append(f"worktree {tree.name}")
        shutil.rmtree(root, ignore_errors=True)
        repo.prune_worktrees()
    refs = repo.git("for-each-ref", "--format=%(refname)", f"refs/plait/checkpoints/{run_id}/").split()
    for ref in refs:
        repo.git("update-ref", "-d", ref, check=False)
    if refs:
        done.append(f"{len(refs)} checkpoint ref(s)")
    return done


def ended_note(repo: Repo, state: RunState) -> str:
    """What `plait resume` says of a run that has ended, once it has finished the clean-up a kill cut short."""
    finished = state.finished
    assert finished is not None
    tidied = tidy_run(repo, state.run_id)
    if finished.reason.startswith(PLANNING_FAILED):
        detail = finished.reason.removeprefix(PLANNING_FAILED).lstrip(": ")
        said = f"run {state.run_id} ended in planning failure ({detail}): nothing to resume; `plait run` starts afresh"
    else:
        said = f"run {state.run_id} already ended ({finished.status}): nothing to resume"
    return f"{said}; finished its clean-up, removed {', '.join(tidied)}" if tidied else said


GATE_DIR = "_gate"
"""Under plait's worktrees: the one `plait integrate` keeps for its gate (see `reconcile.gate`)."""


def _worktree_findings(repo: Repo, states: dict[str, RunState]) -> list[Finding]:
    findings: list[Finding] = []
    root = repo.plait_dir() / "worktrees"
    registered = set(repo.worktrees())
    for run_dir in sorted(root.glob("*")) if root.exists() else []:
        state = states.get(run_dir.name)
        ended = state is None or not state.unfinished
        for tree in sorted(run_dir.iterdir()) if ended and run_dir.is_dir() else []:
            size = disk_usage(tree)

            def remove(tree: Path = tree) -> str:
                _remove_tree(repo, tree, registered)
                return f"removed {tree.relative_to(root)}"

            why = "registered with git" if tree.absolute() in registered else "not known to git"
            said = f"leftover worktree {tree.relative_to(root)} of an ended run ({why})"
            if run_dir.name == GATE_DIR:  # plait integrate's: kept on purpose, and remade when it is gone
                said = f"worktree {tree.relative_to(root)} kept by plait integrate's gate for its next run ({why})"
            findings.append(Finding("worktree", said, "info" if run_dir.name == GATE_DIR else "warning", remove, size))
    missing = [p for p in registered if not p.exists()]
    if missing:

        def prune() -> str:
            repo.prune_worktrees()
            return "pruned git's record of them"

        findings.append(Finding("worktree", f"{len(missing)} worktree(s) git knows are gone from disk", repair=prune))
    return findings


def _lock_findings(repo: Repo) -> list[Finding]:
    """Lock files a killed git left under plait's refs: each keeps its ref from ever being updated again."""
    findings: list[Finding] = []
    now = time.time()
    for top in (repo.common_dir / "refs" / "heads" / "plait", repo.common_dir / "refs" / "plait"):
        for lock in sorted(top.rglob("*.lock")) if top.is_dir() else []:
            try:
                stale = lock.is_file() and now - lock.stat().st_mtime > _STALE_LOCK_S
            except OSError:
                continue
            if not stale:
                continue
            name = lock.relative_to(repo.common_dir).as_posix()

            def unlock(lock: Path = lock, name: str = name) -> str:
                lock.unlink(missing_ok=True)
                return f"removed {name}"

            message = f"stale lock {name} left by a killed git: {name.removesuffix('.lock')} cannot be updated"
            findings.append(Finding("lock", message, repair=unlock))
    return findings


def _branch_findings(repo: Repo, states: dict[str, RunState]) -> list[Finding]:
    findings: list[Finding] = []
    for state in states.values():
        if not state.unfinished:
            continue
        for (task, number), sha in state.commits.items():
            branch = f"plait/{state.run_id}/{task}" + (f".{number}" if number > 1 else "")
            if repo.branch_exists(branch):
                continue
            present = bool(repo.git("rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}", check=False).strip())
            if present:

                def restore(branch: str = branch, sha: str = sha) -> str:
                    repo.git("branch", branch, sha)
                    return f"restored {branch}"

                message = f"branch {branch} of unfinished run {state.run_id} was deleted"
                findings.append(Finding("branch", message, repair=restore))
            else:
                message = f"branch {branch} and commit {sha[:10]} are gone: resuming {state.run_id} redoes that task"
                findings.append(Finding("branch", message, "error"))
    return findings


def _ref_findings(repo: Repo, states: dict[str, RunState]) -> list[Finding]:
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/plait/checkpoints/").split()
    ended = {r for r in refs if (s := states.get(r.split("/")[3])) is None or not s.unfinished}
    if not ended:
        return []

    def drop() -> str:
        for ref in ended:
            repo.git("update-ref", "-d", ref)
        return f"deleted {len(ended)} checkpoint ref(s)"

    return [Finding("refs", f"{len(ended)} checkpoint ref(s) of ended runs", "info", repair=drop)]


def diagnose(repo: Repo) -> list[Finding]:
    """Everything wrong with a repository's plait state, most serious first."""
    return _diagnose(repo, branches=False)[0]


def collect(repo: Repo) -> tuple[list[Finding], list[BranchVerdict]]:
    """What `plait gc` removes: the leftovers of ended runs (worktrees, checkpoint refs, stale locks) and the
    branches they no longer need (see `plait.run._branch_gc`); and the plait branches it keeps, each with why."""
    findings, verdicts = _diagnose(repo, branches=True)
    garbage = [f for f in findings if f.kind in ("worktree", "refs", "lock", "old-branch") and f.repair is not None]
    return garbage, [v for v in verdicts if not v.remove]


def _old_branch(repo: Repo, verdict: BranchVerdict) -> Finding:
    def remove() -> str:
        repo.git("branch", "-D", verdict.branch)
        return f"removed branch {verdict.branch} ({verdict.why})"

    return Finding("old-branch", f"branch {verdict.branch}: {verdict.why}", "info", repair=remove)


def _applied(log: RunLog) -> bool:
    return any(isinstance(e, Decision) and e.topic == "apply" for e in log.events(kinds=["decision"]))


def _diagnose(repo: Repo, *, branches: bool) -> tuple[list[Finding], list[BranchVerdict]]:
    location = load_settings(repo.root, report=None).settings.store
    path = repo.common_dir / "plait" / "events.db"
    if location:
        findings, store = _server_findings(location, store_scope(repo))
    elif path.exists():
        findings, store = _log_findings(path)
    else:
        return _lock_findings(repo), []
    findings += _lock_findings(repo)
    if store is None:
        return findings, []
    states = {run_id: load_state(RunLog(store, run_id)) for run_id in store.run_ids()}
    applied = {run_id for run_id in states if _applied(RunLog(store, run_id))} if branches else set()
    store.close()
    findings += _worktree_findings(repo, states) + _branch_findings(repo, states) + _ref_findings(repo, states)
    verdicts = judge_branches(repo, states, applied) if branches else []
    findings += [_old_branch(repo, v) for v in verdicts if v.remove]
    return findings, verdicts
