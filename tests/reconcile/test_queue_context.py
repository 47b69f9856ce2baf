"""The resolvers' context (which integrated tasks touched the conflicted paths) is made only when a conflict needs it,
and is what it was when it was made at every merge: what a task touched is told from the head it was merged onto."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from noting_git import noting_git
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.reconcile.gate import Gate
from plait.reconcile.queue import MergeQueue, QueueReport, TaskBranch
from plait.reconcile.types import FileConflict, MergeContext, Resolution, Rung

RUN = "r1"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


class _Recorder:
    """A rung that resolves nothing and keeps the context it was given."""

    rung: Rung = "deterministic"

    def __init__(self) -> None:
        self.seen: list[MergeContext] = []

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        self.seen.append(context)
        return None


def _task(box: Sandbox, task_id: str, files: dict[str, str | None], parent: str) -> TaskBranch:
    sha = box.branch(f"plait/{RUN}/{task_id}", files, parent=parent)
    return TaskBranch(task_id, f"plait/{RUN}/{task_id}", sha, instructions=f"do {task_id}", summary=f"did {task_id}")


def test_the_context_is_made_for_a_conflict_only_and_told_from_where_each_task_landed(
    box: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = box.start({"a.txt": "1\n2\n3\n", "b.txt": "b\n"})
    assert box.repo is not None
    first = _task(box, "t1", {"a.txt": "one\n2\n3\n"}, base)
    other = _task(box, "t2", {"b.txt": "bee\n"}, base)
    late = _task(box, "t3", {"a.txt": "uno\n2\n3\n"}, base)
    store = SQLiteEventStore(tmp_path / "events.db")
    recorder = _Recorder()
    gate = Gate(box.repo, base=base, log=RunLog(store, RUN), detect=False)
    queue = MergeQueue(box.repo, RunLog(store, RUN), base, gate=gate, resolvers=[recorder])
    path, calls = noting_git(tmp_path)
    monkeypatch.setenv("PATH", path)

    async def drain(*tasks: TaskBranch) -> QueueReport:
        for task in tasks:
            await queue.submit(task)
        return await queue.drain()

    clean = asyncio.run(drain(first, other))
    assert clean.integrated == ["t1", "t2"]
    assert not [c for c in calls.read_text().splitlines() if "--merge-base" in c]  # nobody asked what they touched

    report = asyncio.run(drain(late))

    assert [e.task_id for e in report.ejected] == ["t3"]
    (context,) = recorder.seen
    assert context.ours_task == "[t1] do t1"  # t1 touched a.txt since the base it landed on; t2 did not
    assert context.theirs_task == "do t3"
    store.close()
