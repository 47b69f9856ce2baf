from __future__ import annotations

from plait.coord import Board
from plait.events import NotePosted, NotesDelivered, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.plan_model import Plan

RUN = "r1"


def _texts(notes: list[str]) -> str:
    return "\n".join(notes)


def test_each_task_gets_only_the_new_notes_that_concern_it(store: SQLiteEventStore, plan: Plan) -> None:
    board = Board(RunLog(store, RUN), plan)
    board.post("api", "finding", "view.py renders cents as floats", paths=["src/ui/view.py"])
    board.post("docs", "warning", "Entry gains a currency field", paths=["./src/models.py"])
    board.post("docs", "ledger-api", "post() now returns the entry id")
    board.post("radar", "conflict", "for docs only", paths=["src/api/x.py"], to=["docs"])
    board.post("api", "all", "tests need LEDGER_DB set")
    board.post("ui", "finding", "the contract file is missing a type", paths=["src/ledger.py"])
    board.post("docs", "finding", "the docs folder moved", paths=["docs/"])

    api, ui, docs = _texts(board.take("api")), _texts(board.take("ui")), _texts(board.take("docs"))

    # write-set, read-set, contract topic, contract file; never its own note
    assert "currency field" in api and "returns the entry id" in api and "missing a type" in api
    assert "cents as floats" not in api and "LEDGER_DB" not in api and "for docs only" not in api
    # addressed notes reach only their addressees, even when the paths would match another task
    assert "for docs only" in docs and "for docs only" not in api
    assert "cents as floats" in ui and "returns the entry id" in ui and "LEDGER_DB" in ui and "folder moved" in ui
    assert "missing a type" not in ui
    assert "LEDGER_DB" in docs and "cents as floats" not in docs and "folder moved" not in docs
    assert "[finding] from api about src/ui/view.py:" in ui
    # each note is given once
    assert board.take("api") == board.take("ui") == board.take("docs") == []
    assert board.take("stranger") == ["[all] from api:\ntests need LEDGER_DB set"]


def test_notes_over_the_budget_wait_for_the_next_turn_addressed_and_newest_first(
    store: SQLiteEventStore, plan: Plan
) -> None:
    board = Board(RunLog(store, RUN), plan, budget=240)
    for i in range(4):
        board.post("api", "all", f"general note {i} " + "x" * 40)
    board.post("api", "finding", "addressed to ui " + "y" * 40, to=["ui"])
    source = board.notes_for("ui")

    first = list(source())
    assert "addressed to ui" in first[0] and "general note 3" in first[1] and "general note 2" in first[2]
    assert first[-1] == "(2 more note(s) wait for your next turn: this turn's notes reached 240 characters.)"
    assert sum(len(n) for n in first[:-1]) <= 240
    second = list(source())
    assert len(second) == 2 and "general note 1" in second[0] and "general note 0" in second[1]
    assert list(source()) == []


def test_a_note_longer_than_the_budget_is_cut_rather_than_held_forever(store: SQLiteEventStore, plan: Plan) -> None:
    board = Board(RunLog(store, RUN), plan, budget=100)
    board.post("api", "all", "z" * 500)
    (only,) = board.take("ui")
    assert only.endswith("(cut: the note is longer than a turn's notes may be)") and len(only) < 200


def test_a_board_rebuilt_from_the_log_keeps_every_note_and_what_was_given(store: SQLiteEventStore, plan: Plan) -> None:
    board = Board(RunLog(store, RUN), plan)
    board.post("api", "ledger-api", "signature: post(entry: Entry) -> int")
    given = board.take("ui")
    # what the agent loop logs when it delivers notes
    store.append(NotesDelivered(run_id=RUN, agent="ui", decision="delivered", notes=given, step=1, attempt=1))
    board.post("api", "ledger-api", "post raises LedgerClosed")
    # the radar appends its warnings to the log directly; the board reads them from there
    store.append(NotePosted(run_id=RUN, agent="radar", topic="conflict", text="radar warning", to=["ui"]))

    rebuilt = Board.from_log(RunLog(store, RUN), plan)

    assert [n.text for n in rebuilt.notes] == [
        "signature: post(entry: Entry) -> int",
        "post raises LedgerClosed",
        "radar warning",
    ]
    again = _texts(rebuilt.take("ui"))
    assert "LedgerClosed" in again and "radar warning" in again and "signature" not in again
    assert rebuilt.take("api") == []


def test_the_planner_tells_the_tasks_an_overlap_decision_changed(store: SQLiteEventStore) -> None:
    from plait.plan import resolve_overlaps
    from plait.run.orchestrate import _post_decisions

    raw = Plan.model_validate(
        {
            "mode": "parallel",
            "reason": "two areas",
            "tasks": [
                {"id": "a", "title": "A", "instructions": "a", "writes": ["src/cli.py", "src/a.py"]},
                {"id": "b", "title": "B", "instructions": "b", "writes": ["src/cli.py", "src/b.py"]},
                {"id": "c", "title": "C", "instructions": "c", "writes": ["src/c.py"]},
            ],
        }
    )
    plan, decisions = resolve_overlaps(raw, ["src/cli.py", "src/a.py", "src/b.py", "src/c.py"])
    assert decisions
    _post_decisions(RunLog(store, RUN), plan, decisions)
    board = Board(RunLog(store, RUN), plan)
    told = {t.id: _texts(board.take(t.id)) for t in plan.tasks}
    assert told["c"] == ""
    changed = [t for t in told.values() if "plait changed the planner's plan:" in t]
    assert changed and all("src/cli.py" in t for t in changed)
    assert all("[plan] from planner" in t for t in changed)
