"""A task's files, for the board, include the files it holds a claim on; the plan's shared files need claims."""

from __future__ import annotations

from plait.coord import Board, Leases
from plait.coord.leases import Claim, Refusal
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.plan_model import Plan, PlanTask

RUN = "r1"


def test_a_note_on_a_claimed_file_reaches_the_claimer_until_it_lets_go(store: SQLiteEventStore, plan: Plan) -> None:
    leases = Leases(RunLog(store, RUN), plan, tracked=True)
    leases.start("docs")
    assert isinstance(leases.claim("docs", "src/registry.py", "add the docs page to it"), Claim)
    board = Board(RunLog(store, RUN), plan)
    board.post("merge-queue", "integrated", "Task api is integrated; it changed src/registry.py", ["src/registry.py"])
    assert board.audience(board.notes[-1]) == ["docs"]
    assert "Task api is integrated" in "\n".join(board.take("docs"))
    leases.release_all("docs")
    board.post("merge-queue", "integrated", "Task ui is integrated; it changed src/registry.py", ["src/registry.py"])
    assert board.take("docs") == []


def test_a_file_the_plan_shares_is_held_by_whoever_claims_it_not_by_a_write_set(store: SQLiteEventStore) -> None:
    tasks = [PlanTask(id=t, title=t, instructions="x", writes=[f"src/{t}.py", "src/registry.py"]) for t in ("a", "b")]
    plan = Plan(mode="parallel", reason="two", tasks=tasks, shared=["src/registry.py"])
    leases = Leases(RunLog(store, RUN), plan, tracked=True)
    leases.start("a")
    leases.start("b")
    assert leases.needs_claim("a", "src/registry.py") and not leases.needs_claim("a", "src/a.py")
    assert isinstance(leases.claim("a", "src/registry.py", "register a"), Claim)  # b's write-set does not hold it
    refused = leases.claim("b", "src/registry.py", "register b")
    assert isinstance(refused, Refusal) and refused.holder == "a"
    leases.release_all("a")
    assert isinstance(leases.claim("b", "src/registry.py", "register b"), Claim)
