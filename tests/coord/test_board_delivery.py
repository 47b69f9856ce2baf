"""Notes delivery is linear: each note is judged once per agent, and the board hands out what a full rescan would."""

from __future__ import annotations

import random

import pytest

from plait.coord import Board, Note
from plait.events import LeaseChanged, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.plan_model import Plan

RUN = "r1"


class _CountingBoard(Board):
    judged = 0

    def concerns(self, note: Note, task_id: str) -> bool:
        self.judged += 1
        return super().concerns(note, task_id)


def _rescan(board: Board, task_id: str, given: set[int]) -> list[str]:
    """A turn's notes as judged by going through every note on the board again, with no budget."""
    waiting = [n for n in board.notes if n.seq not in given and board.concerns(n, task_id)]
    waiting.sort(key=lambda n: (task_id not in n.to, -n.seq))
    given.update(n.seq for n in waiting)
    return [n.render() for n in waiting]


def test_each_note_is_judged_once_per_agent_however_many_turns(store: SQLiteEventStore, plan: Plan) -> None:
    board = _CountingBoard(RunLog(store, RUN), plan)
    for i in range(50):
        board.post("api", "finding", f"note {i} for docs", to=["docs"])
    for _ in range(10):
        assert board.take("ui") == []
    board.post("api", "finding", "view.py renders cents", paths=["src/ui/view.py"])
    assert "renders cents" in "\n".join(board.take("ui"))
    assert board.take("ui") == []
    # 51 notes, each judged on the first turn that saw it, plus the one delivered again when handed out
    assert board.judged <= 52


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_claims_taken_and_let_go_between_turns_deliver_what_a_rescan_would(
    store: SQLiteEventStore, plan: Plan, seed: int
) -> None:
    rng = random.Random(seed)
    board = Board(RunLog(store, RUN), plan, budget=10**9)
    given: dict[str, set[int]] = {t: set() for t in ("api", "ui", "docs", "stranger")}
    paths = ["src/registry.py", "src/ui/view.py", "docs/guide.md", "src/models.py", "src/ledger.py", "src/", "lib/x.py"]
    topics = ["finding", "all", "ledger-api", "warning"]
    claims = [(task, path) for task in ("api", "ui", "docs") for path in ("src/registry.py", "lib", "src/models.py")]
    for step in range(300):
        roll = rng.random()
        if roll < 0.45:
            to = [rng.choice(list(given))] if rng.random() < 0.15 else []
            author = rng.choice(["api", "ui", "docs", "radar"])
            board.post(author, rng.choice(topics), f"note {step}", rng.sample(paths, k=rng.choice([0, 1, 2])), to)
        elif roll < 0.6:
            task, path = rng.choice(claims)
            action = rng.choice(["claim", "release", "expire"])
            store.append(
                LeaseChanged(
                    run_id=RUN, agent=task, decision=action, task=task, path=path, action=action, holder=task, why=""
                )
            )
        else:
            task = rng.choice(list(given))
            assert board.take(task) == _rescan(board, task, given[task]), f"step {step}, task {task}"
