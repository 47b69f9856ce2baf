"""Merging hostile commits (the merge queue and its ladder, the gate, the radar, apply) runs nothing they name.

Both sides move a submodule whose repository is armed (filters, textconv, external diff, fsmonitor, hooks), name
drivers in `.gitattributes` that only that repository defines, carry a `.gitmodules`, and conflict in a text
file. (A `.gitmodules` naming an update command, git refuses outright.) No marker may appear.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.errors import EnvironmentProblem
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.plan_model import Plan, PlanTask
from plait.reconcile.apply import apply_commit
from plait.reconcile.gate import Gate
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.reconcile.queue import MergeQueue, TaskBranch
from plait.run.radar import Radar
from plait.workspace import Repo

ATTRIBUTES = "* filter=x diff=x merge=x\n"
TEXT = "one\ntwo\nthree\n"


def _armed(where: Path, marks: Path) -> tuple[str, str]:
    """A repository with two commits, then armed; returns both commits."""
    where.mkdir()
    git(where, "init", "-q")
    (where / "f.txt").write_text("hello\n")
    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", "first")
    first = git(where, "rev-parse", "HEAD")
    (where / "f.txt").write_text("hello again\n")
    git(where, "commit", "-q", "-am", "second")

    def touch(name: str) -> str:
        return f"touch {shlex.quote(str(marks / name))}"

    settings = {
        "filter.x.clean": f"{touch('filter-clean')}; cat",
        "filter.x.smudge": f"{touch('filter-smudge')}; cat",
        "diff.x.textconv": f"{touch('textconv')}; cat",
        "merge.x.driver": f"{touch('merge-driver')}; false",
        "diff.external": touch("diff-external"),
        "core.fsmonitor": f"{touch('fsmonitor')}; false",
    }
    for key, value in settings.items():
        subprocess.run(["git", "config", "--file", str(where / ".git" / "config"), key, value], check=True)
    (where / ".gitattributes").write_text(ATTRIBUTES)
    hook = where / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\n{touch('hook')}\n")
    hook.chmod(0o755)
    return first, git(where, "rev-parse", "HEAD")


def _commit(box: Sandbox, parent: str | None, text: str, link: str) -> str:
    index = box.root / ".git" / "hostile-index"
    env = {"GIT_INDEX_FILE": str(index)}
    index.unlink(missing_ok=True)
    git(box.root, "read-tree", *([parent] if parent else ["--empty"]), env=env)
    files = {
        "a.txt": text,
        ".gitattributes": ATTRIBUTES,
        ".gitmodules": '[submodule "sub"]\n\tpath = sub\n\turl = ../armed\n',
    }
    for path, content in files.items():
        blob = git(box.root, "hash-object", "-w", "--stdin", input=content)
        git(box.root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    git(box.root, "update-index", "--add", "--cacheinfo", f"160000,{link},sub", env=env)
    tree = git(box.root, "write-tree", env=env)
    return git(box.root, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", "hostile")


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Sandbox, Path, str, str, str, str]:
    box = sandbox(tmp_path, monkeypatch)
    marks = tmp_path / "marks"
    marks.mkdir()
    first, second = _armed(tmp_path / "armed", marks)
    base = _commit(box, None, TEXT, first)
    git(box.root, "update-ref", "refs/heads/main", base)
    git(box.root, "reset", "-q", "--hard", "main")
    ours = _commit(box, base, "one\nTWO\nthree\n", second)
    theirs = _commit(box, base, "one\ntwo!\nthree\nfour\n", first)
    git(box.root, "update-ref", "refs/heads/main", ours)
    git(box.root, "reset", "-q", "--hard", "main")
    box.repo = Repo.discover(box.root)
    assert not list(marks.iterdir())
    return box, marks, base, ours, theirs, second


def test_the_ladder_the_queue_and_the_gate_run_nothing(hostile: tuple[Sandbox, Path, str, str, str, str]) -> None:
    box, marks, base, ours, theirs, second = hostile
    assert box.repo is not None
    outcome = asyncio.run(merge_commits(box.repo, ours, theirs, resolvers=default_resolvers()))
    assert "sub" in outcome.detail or outcome.unresolved
    store = SQLiteEventStore(box.root.parent / "events.db")
    gate = Gate(box.repo, base=base, log=RunLog(store, "r1"), verify_command="cat a.txt", detect=False)
    queue = MergeQueue(box.repo, RunLog(store, "r1"), base, gate=gate, resolvers=default_resolvers())

    async def drain() -> None:
        for name, sha in (("a", ours), ("b", theirs)):
            await queue.submit(TaskBranch(name, name, sha))
        await queue.drain()

    try:
        asyncio.run(drain())
    finally:
        gate.close()
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_radar_and_apply_run_nothing(hostile: tuple[Sandbox, Path, str, str, str, str]) -> None:
    box, marks, base, ours, theirs, second = hostile
    assert box.repo is not None
    plan = Plan(mode="parallel", reason="t", tasks=[PlanTask(id=i, title=i, instructions=i) for i in ("a", "b")])
    radar = Radar(box.repo, RunLog(SQLiteEventStore(box.root.parent / "events.db"), "r1"), plan, lambda: base)
    assert "a.txt" in radar.conflicts(ours, theirs)
    with pytest.raises(EnvironmentProblem, match="conflicts with main"):
        asyncio.run(apply_commit(box.repo, theirs, what="the hostile branch"))
    ahead = _commit(box, ours, "one\nTWO\nthree\nfive\n", second)
    assert asyncio.run(apply_commit(box.repo, ahead, what="the hostile branch")).mode == "fast-forward"
    assert (box.root / "a.txt").read_text() == "one\nTWO\nthree\nfive\n"
    assert sorted(p.name for p in marks.iterdir()) == []
