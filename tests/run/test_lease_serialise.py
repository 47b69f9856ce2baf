"""Two agents contend for one file: the lease makes them take turns instead of conflicting.

Real worktrees, real git, the real agent loop, leases, merge queue and gate; only the model is scripted.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from integrators import git

from plait.agent.tools import Toolbox
from plait.coord import Board, Leases, coord_tools
from plait.events import Committed, LeaseChanged, MergeStep, SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel
from plait.plan_model import Plan, PlanTask
from plait.reconcile.gate import Gate
from plait.reconcile.ladder import default_resolvers
from plait.reconcile.queue import MergeQueue
from plait.run.base import RunBase
from plait.run.integrate import QueueIntegrator
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

RUN = "r1"
ALPHA_WORK = "    return 1\n\n\ndef alpha_two():\n    return 2\n"
BETA_WORK = "    return 2\n\n\ndef from_beta():\n    return 3\n"


def _plan() -> Plan:
    tasks = [
        PlanTask(id="alpha", title="grow alpha", instructions="Add alpha_two to alpha.py.", writes=["alpha.py"]),
        PlanTask(
            id="beta", title="grow beta", instructions="Change beta; add from_beta to alpha.py.", writes=["beta.py"]
        ),
    ]
    return Plan(mode="parallel", reason="two modules", tasks=tasks)


def _call(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=(ToolCall.parse(f"c-{name}", name, arguments),))


def _task_of(request: ModelRequest) -> str:
    first = next(m.text for m in request.messages if isinstance(m, UserMessage))
    return "alpha" if "Your task is `alpha`" in first else "beta"


def _leases(store: SQLiteEventStore, agent: str) -> list[dict[str, Any]]:
    return [e.model_dump() for e in store.events(RUN, agent=agent, kinds=["lease"]) if isinstance(e, LeaseChanged)]


def _contending_model(store: SQLiteEventStore) -> FunctionModel:
    """alpha appends to alpha.py; beta claims alpha.py to append to it too, and alpha finishes once beta waits."""

    async def answer(request: ModelRequest) -> ModelResponse:
        turn = sum(1 for m in request.messages if m.kind == "assistant")
        if _task_of(request) == "alpha":
            if turn == 0:
                return _call("edit_file", path="alpha.py", old="    return 0\n", new=ALPHA_WORK)
            for _ in range(10_000):  # finish only once beta waits for alpha.py: the wait is certain, not timed
                if any(d["action"] == "wait" for d in _leases(store, "beta")):
                    return _call("finish", summary="alpha_two added")
                await asyncio.sleep(0.005)
            raise AssertionError("beta never waited for alpha.py")
        script = [
            _call("claim", path="alpha.py", why="add from_beta at its end"),
            _call("read_file", path="alpha.py"),
            _call("edit_file", path="alpha.py", old="    return 2\n", new=BETA_WORK),
            _call("edit_file", path="beta.py", old="return 0", new="return 5"),
            _call("finish", summary="beta returns 5; from_beta added to alpha.py"),
        ]
        return script[turn]

    return FunctionModel(answer)


def _run(repo: Repo, tmp_path: Path, plan: Plan, model: FunctionModel, store: SQLiteEventStore) -> ParallelOutcome:
    base = RunBase(repo.head(), "main")
    gate = Gate(repo, base=base.commit, log=RunLog(store, RUN), verify_command="true", detect=False)
    queue = MergeQueue(repo, RunLog(store, RUN), base.commit, gate=gate, resolvers=default_resolvers())
    ctx = PlanContext(
        repo=repo,
        settings=Settings(concurrency=2, max_attempts=1, radar_interval=0, max_format_errors=1),
        model=model,
        log=RunLog(store, RUN),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
    )
    try:
        return asyncio.run(run_plan(ctx, plan, QueueIntegrator(RunLog(store, RUN), lambda: queue)))
    finally:
        gate.close()


def test_two_agents_contending_for_a_file_take_turns_and_integrate_without_a_conflict(
    repo: Repo, tmp_path: Path
) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    outcome = _run(repo, tmp_path, _plan(), _contending_model(store), store)

    assert outcome.status == "done" and {t: r.status for t, r in outcome.results.items()} == {
        "alpha": "done",
        "beta": "done",
    }
    # beta waited for alpha, got the file once alpha's work was integrated, with that work merged in
    leases = [(d["action"], d["holder"]) for d in _leases(store, "beta") if d["path"] == "alpha.py"]
    assert leases[:3] == [("wait", "alpha"), ("claim", "beta"), ("update", "beta")]
    claimed = next(e for e in store.events(RUN, agent="beta", kinds=["tool_result"]) if isinstance(e, ToolReturned))
    assert claimed.output.startswith("claimed alpha.py after task alpha finished; your worktree now holds alpha's")
    assert "read alpha.py again before you edit it" in claimed.output and not claimed.is_error
    # its edit was made on top of alpha's (its `old` exists only there), and merged without a conflict
    steps = [e for e in store.events(RUN, kinds=["merge"]) if isinstance(e, MergeStep)]
    assert [(s.task, s.rung, s.outcome) for s in steps] == [("alpha", "git", "clean"), ("beta", "git", "clean")]
    alpha = git(repo.root, "show", f"{outcome.branch}:alpha.py")
    assert alpha == ("def alpha():\n" + ALPHA_WORK + BETA_WORK.removeprefix("    return 2\n")).rstrip()
    assert "return 5" in git(repo.root, "show", f"{outcome.branch}:beta.py")
    # beta's branch descends from the integration head it merged; its commit names only its own files
    merged = next(d for d in _leases(store, "beta") if d["action"] == "update")["head"]
    git(repo.root, "merge-base", "--is-ancestor", merged, f"plait/{RUN}/beta")
    commits = {e.agent: e.files for e in store.events(RUN, kinds=["commit"]) if isinstance(e, Committed)}
    assert commits == {"alpha": ["alpha.py"], "beta": ["alpha.py", "beta.py"]}
    # every claim was released when its task ended
    assert Leases.from_log(RunLog(store, RUN), _plan()).holders() == {}


def test_a_worktree_restored_after_a_crash_keeps_the_merge_its_claim_made(repo: Repo, tmp_path: Path) -> None:
    base = repo.head()
    integrated = repo.add_worktree(tmp_path / "other", "other", base)
    (integrated.path / "alpha.py").write_text("def alpha():\n" + ALPHA_WORK)
    head = integrated.commit_all("alpha's work")
    assert head is not None
    worktree = repo.add_worktree(tmp_path / "beta", "plait/r1/beta", base)
    ref = "refs/plait/checkpoints/r1/beta.1"
    (worktree.path / "beta.py").write_text("def beta():\n    return 5\n")
    first = worktree.checkpoint(ref, base)
    assert first is not None

    assert worktree.merge_in(head, "bring in alpha's work") == []
    merge = worktree.head()
    assert merge == head  # the branch took alpha's work alone; beta's unfinished work is not committed on it
    after = worktree.checkpoint(ref, first)  # the checkpoint after the claim: beta's work on top of the merge
    assert after is not None and git(worktree.path, "rev-parse", f"{after}^") == merge
    (worktree.path / "alpha.py").write_text("def alpha():\n" + ALPHA_WORK + "\n\ndef from_beta():\n    return 3\n")
    last = worktree.checkpoint(ref, after)
    assert last is not None and git(worktree.path, "rev-parse", f"{last}^") == after

    # a new process: the worktree is re-added at the attempt's base and restored from its last checkpoint
    again = repo.readd_worktree(worktree.path, worktree.branch, base)
    again.restore(last)

    assert again.head() == merge  # the merge is in the branch's history again
    assert git(again.path, "diff", "--name-only", "HEAD").split() == ["alpha.py", "beta.py"]  # uncommitted, as it was
    assert "from_beta" in (again.path / "alpha.py").read_text()
    assert (again.path / "beta.py").read_text() == "def beta():\n    return 5\n"
    final = again.commit_all("beta's work")
    assert final is not None
    git(repo.root, "merge-base", "--is-ancestor", head, final)
    assert sorted(again.changed_files(head)) == ["alpha.py", "beta.py"]


def test_a_claim_whose_merge_conflicts_is_refused_and_leaves_the_worktree_as_it_was(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    base = repo.head()
    integrated = repo.add_worktree(tmp_path / "other", "other", base)
    (integrated.path / "gamma.py").write_text("def gamma():\n    return 7\n")
    head = integrated.commit_all("someone's work on gamma")
    assert head is not None
    worktree = repo.add_worktree(tmp_path / "beta", "plait/r1/beta", base)
    (worktree.path / "gamma.py").write_text("def gamma():\n    return 9\n")  # beta's own change, made earlier
    (worktree.path / "beta.py").write_text("def beta():\n    return 5\n")
    plan, leases = _plan(), Leases(RunLog(store, RUN), _plan(), tracked=True)
    leases.start("beta")
    board = Board(RunLog(store, RUN), plan)
    tools = coord_tools(
        Toolbox(worktree.path, LocalShell()), "beta", board, leases, worktree=worktree, head=lambda: head
    )

    outcome = asyncio.run(tools.execute(ToolCall.parse("1", "claim", {"path": "gamma.py", "why": "a fix"})))

    assert outcome.is_error and outcome.output.startswith("refused: gamma.py was changed by tasks that finished")
    assert "conflicts with your own changes in gamma.py" in outcome.output and "claim is released" in outcome.output
    assert worktree.head() == base and git(worktree.path, "diff", "--cached", "--name-only") == ""
    assert git(worktree.path, "diff", "--name-only").split() == ["beta.py", "gamma.py"]
    assert (worktree.path / "gamma.py").read_text() == "def gamma():\n    return 9\n"
    assert leases.holders() == {}
    assert [d["action"] for d in _leases(store, "beta")] == ["claim", "update", "release"]
