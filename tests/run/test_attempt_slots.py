"""What an attempt holds while it is not agent work: no slot while it waits to merge, no lock to remove its worktree."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from integrators import MergeTreeIntegrator, git

from plait.events import Event, ObservedStore, SQLiteEventStore, TaskStarted
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from plait.workspace.git import worktree_lock


class HeldIntegrator(MergeTreeIntegrator):
    """Merges `first` only once `other`'s attempt has started (as a merge queue busy with other merges would)."""

    def __init__(self, repo: Repo, run_id: str, base: str, first: str, other: threading.Event) -> None:
        super().__init__(repo, run_id, base)
        self.first, self.other = first, other
        self.other_started_meanwhile: bool | None = None

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        if task.id == self.first:  # the fail-safe wait only ends a run that would never end
            self.other_started_meanwhile = await asyncio.to_thread(self.other.wait, 10)
        return await super().integrate(task, branch, commit, summary)


def _task(name: str) -> dict[str, object]:
    edit = {"path": f"{name}.py", "old": "return 0", "new": "return 1"}
    return {
        "match": f"Your task is `{name}`",
        "turns": [
            {"tool_calls": [{"name": "edit_file", "arguments": edit}]},
            {"tool_calls": [{"name": "finish", "arguments": {"summary": f"{name} returns 1"}}]},
        ],
    }


def test_an_attempt_waiting_to_merge_gives_its_slot_to_the_next(repo: Repo, tmp_path: Path) -> None:
    beta_started = threading.Event()

    def started(event: Event) -> None:
        if isinstance(event, TaskStarted) and event.agent == "beta":
            beta_started.set()

    store = ObservedStore(SQLiteEventStore(tmp_path / "events.db"), started)
    base = RunBase(repo.head(), "main")
    integrator = HeldIntegrator(repo, "r1", base.commit, "alpha", beta_started)
    tasks = [PlanTask(id=n, title=n, instructions=f"Make {n} return 1.", writes=[f"{n}.py"]) for n in ("alpha", "beta")]
    ctx = PlanContext(
        repo=repo,
        settings=Settings(concurrency=1, max_attempts=1),
        model=ScriptedModel(conversations=[_task("alpha"), _task("beta")]),
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
    )

    outcome = asyncio.run(run_plan(ctx, Plan(mode="parallel", reason="two", tasks=tasks), integrator))

    assert integrator.other_started_meanwhile is True
    assert {t: r.status for t, r in outcome.results.items()} == {"alpha": "done", "beta": "done"}


def test_a_worktree_is_removed_while_another_is_being_made(repo: Repo, tmp_path: Path) -> None:
    worktree = repo.add_worktree(tmp_path / "wt", "plait/r1/alpha", "HEAD")
    removing = threading.Thread(target=worktree.remove)
    with worktree_lock(repo.common_dir):  # held as a `worktree add` holds it
        removing.start()
        removing.join(timeout=10)  # a fail-safe: a removal waiting for the lock would wait forever
        removed_meanwhile = not removing.is_alive()
    removing.join()
    assert removed_meanwhile
    assert not worktree.path.exists()
    assert worktree.path not in repo.worktrees()


def test_a_worktree_is_made_while_another_checks_out_its_files(repo: Repo, tmp_path: Path) -> None:
    """The first checkout waits in a smudge filter until the second worktree is made; git's own `worktree add`
    checks out holding the lock, and the second would wait for the filter's fail-safe to run out."""
    flag, started, timed_out = tmp_path / "go", tmp_path / "smudging", tmp_path / "timed-out"
    smudge = (
        f"if [ ! -e {started} ]; then touch {started}; i=0; "
        f"while [ ! -e {flag} ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
        f"[ -e {flag} ] || touch {timed_out}; fi; cat"
    )
    git(repo.root, "config", "filter.slow.smudge", smudge)
    git(repo.root, "config", "filter.slow.clean", "cat")
    (repo.root / ".gitattributes").write_text("alpha.py filter=slow\n")
    git(repo.root, "add", ".gitattributes")
    git(repo.root, "commit", "-q", "-m", "filter")
    making = threading.Thread(target=repo.add_worktree, args=(tmp_path / "one", "plait/r1/one", "HEAD"))
    making.start()
    while not started.exists() and making.is_alive():  # the first checkout is under way, held in the filter
        making.join(timeout=0.05)
    assert started.exists()
    second = repo.add_worktree(tmp_path / "two", "plait/r1/two", "HEAD")
    flag.touch()
    making.join()
    assert not timed_out.exists()
    assert (second.path / "alpha.py").read_text() == "def alpha():\n    return 0\n"
    assert (tmp_path / "one" / "alpha.py").read_text() == "def alpha():\n    return 0\n"
