"""The gate's semantic stage holds a name a merged file reads that nothing binds, when the merge brought it."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.reconcile.gate import Gate
from plait.reconcile.ladder import default_resolvers
from plait.reconcile.queue import MergeQueue, QueueReport, TaskBranch
from plait.reconcile.semantic import find_breakage

REPORT = """def report(items):
    total = 0
    for item in items:
        total += item
    print("counted")
    print("done")
    return len(items)
"""
TIDIED = """def report(items):
    print("counted")
    print("done")
    return len(items)
"""
EXTENDED = REPORT.replace("return len(items)", "return len(items), total")
UTILS = "import os\n\n\ndef home():\n    return os.path.expanduser('~')\n"
CALLER = UTILS + "\n\ndef app_dir(name):\n    return os.path.join(home(), _posixify(name))\n"
RUN = "r1"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _merge(box: Sandbox, ours: str, theirs: str, files: dict[str, str | None]) -> str:
    """A merge commit of `ours` and `theirs` (in that order) whose tree is `ours` with `files` set."""
    tree = box.commit(files, parent=ours)
    return git(box.root, "commit-tree", f"{tree}^{{tree}}", "-p", ours, "-p", theirs, "-m", "merge")


def _integrate(box: Sandbox, base: str, store: SQLiteEventStore, *tasks: TaskBranch) -> QueueReport:
    assert box.repo is not None
    gate = Gate(box.repo, base=base, log=RunLog(store, RUN), detect=False)
    queue = MergeQueue(box.repo, RunLog(store, RUN), base, gate=gate, resolvers=default_resolvers())

    async def go() -> QueueReport:
        for task in tasks:
            await queue.submit(task)
        return await queue.drain()

    return asyncio.run(go())


def _task(box: Sandbox, task_id: str, files: dict[str, str | None], parent: str) -> TaskBranch:
    sha = box.branch(f"plait/{RUN}/{task_id}", files, parent=parent)
    return TaskBranch(task_id, f"plait/{RUN}/{task_id}", sha, instructions=f"do {task_id}", summary=f"did {task_id}")


def test_a_name_the_merge_leaves_unbound_ejects_the_branch_with_a_one_line_reason(box: Sandbox, tmp_path: Path) -> None:
    base = box.start({"stats.py": REPORT})
    tidy = _task(box, "tidy", {"stats.py": TIDIED}, base)
    extend = _task(box, "extend", {"stats.py": EXTENDED}, base)
    report = _integrate(box, base, SQLiteEventStore(tmp_path / "events.db"), tidy, extend)
    assert report.integrated == ["tidy"]
    (ejection,) = report.ejected
    assert (ejection.task_id, ejection.stage) == ("extend", "semantic")
    assert "\n" not in ejection.reason
    assert "stats.py:4: undefined name 'total'" in ejection.reason


def test_a_name_one_branch_reads_unbound_on_its_own_is_reported_as_that_branchs(box: Sandbox) -> None:
    base = box.start({"utils.py": UTILS, "app.py": "X = 1\n"})
    assert box.repo is not None
    landed = box.commit({"app.py": "X = 2\n"}, parent=base)
    caller = box.commit({"utils.py": CALLER}, parent=base)
    merge = _merge(box, landed, caller, {"utils.py": CALLER})
    (found,) = find_breakage(box.repo, base, merge)
    shown = f"git show {caller}:utils.py | grep -nw _posixify"
    assert str(found) == (
        "utils.py:9: undefined name '_posixify' (bound nowhere: not in the module, its imports or the builtins), "
        f"already in {caller[:10]} on its own, not made by the merge; shown by: {shown}"
    )
    done = subprocess.run(shown, shell=True, cwd=box.root, capture_output=True, text=True, check=True)
    assert done.stdout == "9:    return os.path.join(home(), _posixify(name))\n"


def test_a_name_unbound_at_the_base_or_where_the_merge_lands_is_not_the_merges(box: Sandbox) -> None:
    base = box.start({"old.py": "print(legacy)\n", "utils.py": UTILS})
    assert box.repo is not None
    landed = box.commit({"utils.py": CALLER}, parent=base)
    other = box.commit({"old.py": "print(legacy)\nprint(1)\n"}, parent=base)
    merge = _merge(box, landed, other, {"old.py": "print(legacy)\nprint(1)\n"})
    assert [str(b) for b in find_breakage(box.repo, base, merge)] == []
    alone = box.commit({"old.py": "print(legacy, fresh)\n"}, parent=base)
    assert [str(b).split(" (")[0] for b in find_breakage(box.repo, base, alone)] == ["old.py:1: undefined name 'fresh'"]
