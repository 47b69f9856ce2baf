"""`plait ask`: investigators fan out by area, report on the board, and stay available for follow-ups."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from integrators import git
from pydantic import BaseModel
from rich.console import Console

from plait.events import (
    Event,
    LeadReplied,
    ModelCallStarted,
    NotePosted,
    ObservedStore,
    QuestionAnswered,
    RunFinished,
    RunStarted,
    SQLiteEventStore,
)
from plait.events.runlog import RunLog
from plait.messages import ToolResultMessage, UserMessage
from plait.models import ScriptedModel
from plait.run._areas import locate
from plait.run.base import RunBase
from plait.run.investigate import AskOutcome, Inquiry, ask, split_areas
from plait.settings import Settings
from plait.ui.cost import cost_breakdown
from plait.ui.overview import render_cost
from plait.workspace import Repo

RUN = "ask1"
QUESTION = "Why is checkout slow?"


@pytest.fixture
def shop(repo: Repo) -> Repo:
    files = {
        "db/queries.py": "def load_item(item_id):\n    return SELECT('items', item_id)\n",
        "api/checkout.py": "from db.queries import load_item\n\n\ndef total(cart):\n"
        "    return sum(load_item(i).price for i in cart)\n",
        "web/app.js": "async function checkout() {\n  await fetch('/total', {cache: 'no-store'});\n}\n",
    }
    for path, text in files.items():
        (repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / path).write_text(text)
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "shop")
    return repo


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _answer(text: str, *refs: str, not_checked: str = "nothing") -> dict[str, Any]:
    return _call("answer", answer=text, references=list(refs), not_checked=not_checked)


def _investigator(name: str, path: str, expect: str, finding: dict[str, Any], *later: dict[str, Any]) -> dict[str, Any]:
    turns = [
        {"delay": 0.02, **_call("read_file", path=path)},
        {"expect": expect, **finding},
        *later,
    ]
    return {"name": name, "match": f"You are `{name}`", "turns": turns}


AREAS = [
    {"name": "db", "paths": ["db/**"], "question": "Are the item queries slow?"},
    {"name": "api", "paths": ["api/**"], "question": "How does the API compute the total?"},
    {"name": "web", "paths": "web/**", "question": "What does the front end wait for?"},
]
ANSWER = "One query per cart line: api/checkout.py:5 calls load_item (db/queries.py:2) in a loop."
DISAGREE = "api blames the loop at api/checkout.py:5; web says the page also disables caching (web/app.js:2)."


def _model(*, follow_up: bool = False) -> ScriptedModel:
    lead = [
        _call("investigate", question=QUESTION, areas=AREAS),
        {"expect": "## `web`", **_call("answer", answer=ANSWER, disagreements=DISAGREE)},
    ]
    db_later: list[dict[str, Any]] = []
    if follow_up:
        lead += [
            _call("ask_expert", expert="db", question="Is there a batch query I could use instead?"),
            {"expect": "from what it had already read", **_call("answer", answer="No batch query exists yet.")},
        ]
        db_later = [_answer("No: load_item is the only query; a batch one must be added.", "db/queries.py:1")]
    return ScriptedModel(
        conversations=[
            {"name": "lead", "match": "You lead an investigation", "turns": lead},
            _investigator(
                "db", "db/queries.py", "SELECT", _answer("Each load_item is a SELECT.", "queries.py:2"), *db_later
            ),
            _investigator(
                "api",
                "api/checkout.py",
                "load_item",
                # a bare name, a line range, and a file outside its area: each made a path from the root
                _answer("total() calls load_item a line.", "checkout.py:4-5", "db/queries.py:1", "checkout.py:4-5"),
            ),
            _investigator(
                "web",
                "web/app.js",
                "no-store",
                _answer("The page fetches /total uncached (web/app.js:2).", "web/app.js:2", not_checked="the server"),
            ),
        ]
    )


def _ask(repo: Repo, db: Path, model: ScriptedModel, question: str, *, new: bool) -> AskOutcome:
    store = SQLiteEventStore(db)
    try:
        inquiry = Inquiry(
            repo=repo,
            settings=Settings(concurrency=3),
            model=model,
            log=RunLog(store, RUN),
            question=question,
            base=RunBase(repo.head(), "main") if new else None,
        )
        return asyncio.run(ask(inquiry))
    finally:
        store.close()


def test_investigators_fan_out_and_the_lead_combines_their_findings(shop: Repo, tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    model = _model()
    outcome = _ask(shop, db, model, QUESTION, new=True)

    model.assert_complete()
    assert outcome.ok and outcome.answer == ANSWER and outcome.disagreements == DISAGREE
    by_name = {f.investigator: f for f in outcome.findings}
    assert set(by_name) == {"db", "api", "web"}
    assert by_name["api"].refs == ("api/checkout.py:4-5", "db/queries.py:1") and by_name["web"].area == ("web/**",)
    assert by_name["db"].refs == ("db/queries.py:2",) and by_name["web"].not_checked == "the server"
    store = SQLiteEventStore(db)
    # each finding is on the board, with the files it points at
    notes = [e for e in store.events(RUN, kinds=["note"]) if isinstance(e, NotePosted)]
    assert sorted((n.agent, n.topic, tuple(n.paths)) for n in notes) == [
        ("expert:api", "finding", ("api/checkout.py", "db/queries.py")),
        ("expert:db", "finding", ("db/queries.py",)),
        ("expert:web", "finding", ("web/app.js",)),
    ]
    # the investigators worked at the same time: each started before any of them answered
    order = [e.agent for e in store.events(RUN) if isinstance(e, ModelCallStarted)]
    first_answers = min(i for i, a in enumerate(order) if a.startswith("expert:") and order[:i].count(a) == 1)
    assert {a for a in order[:first_answers] if a.startswith("expert:")} == {"expert:db", "expert:api", "expert:web"}
    # a run like any other: started, finished, and its read-only checkout gone
    events = store.events(RUN)
    assert isinstance(events[0], RunStarted) and events[0].task == QUESTION
    assert isinstance(events[-1], RunFinished) and events[-1].status == "done"
    assert git(shop.root, "worktree", "list").count("\n") == 0
    assert git(shop.root, "status", "--porcelain") == ""
    store.close()


def test_investigators_are_told_the_question_their_part_and_who_asks(shop: Repo, tmp_path: Path) -> None:
    model = _model()
    _ask(shop, tmp_path / "events.db", model, QUESTION, new=True)

    db = next(r for r in model.calls if "You are `db`" in r.system)
    assert "The question under investigation, for context:\n> Why is checkout slow?" in db.system
    asks = "The investigation's lead asks you questions: first your area's part of that question, which is what you"
    assert asks in db.system
    assert "coding agents" not in db.system and "session" not in db.system
    first = db.messages[0]
    assert isinstance(first, UserMessage) and first.text.startswith(
        "Question 1, from `lead`:\nAre the item queries slow?"
    )
    assert "Your area: db/**. Start from it; read outside it when the question needs it, and say so." in first.text
    answer = next(t for t in db.tools if t.name == "answer")
    assert answer.parameters["required"] == ["answer", "references", "not_checked"]
    # the lead of an investigation is offered its investigators, not a session's helpers
    lead = next(r for r in model.calls if "You lead an investigation" in r.system)
    ask_expert = next(t for t in lead.tools if t.name == "ask_expert")
    assert "investigators" in ask_expert.description and "helper" not in json.dumps(ask_expert.model_dump())
    assert "spawn_helper" not in json.dumps([t.model_dump() for t in lead.tools])


def test_references_are_made_paths_from_the_root_or_said_to_be_unclear() -> None:
    files = ["src/flask/app.py", "src/flask/sansio/app.py", "src/flask/ctx.py", "tests/app.py", "docs/config.rst"]
    given = [
        "ctx.py:439",  # one tracked file has that name
        "app.py:1415",  # three have it, but one inside the area
        "`/checkout/src/flask/ctx.py#L10-L20`",  # the checkout's own path, GitHub's lines
        "docs/config.rst:110-145 (the SECRET_KEY docs)",
        "ctx.py:439",
        "nope.py:3",
    ]
    found = locate(given, files, ["src/flask/app.py", "src/flask/ctx.py"], root="/checkout")
    assert found.refs == (
        "src/flask/ctx.py:439",
        "src/flask/app.py:1415",
        "src/flask/ctx.py:10-20",
        "docs/config.rst:110-145",
        "nope.py:3",
    )
    assert found.paths == ("src/flask/ctx.py", "src/flask/app.py", "docs/config.rst")
    assert found.unclear == ("nope.py:3: no such file in the repository",)
    # outside the area, a name three files share stays as it was, and says so
    elsewhere = locate(["app.py:1415"], files, ["docs/**"])
    assert elsewhere.refs == ("app.py:1415",) and elsewhere.paths == ()
    assert elsewhere.unclear == (
        "app.py:1415: 3 files match (src/flask/app.py, src/flask/sansio/app.py, tests/app.py)",
    )


def test_a_follow_up_reuses_the_investigators_without_reading_or_paying_again(shop: Repo, tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    _ask(shop, db, _model(follow_up=True), QUESTION, new=True)
    paid_before = _calls(db)

    model = _model(follow_up=True)
    outcome = _ask(shop, db, model, "Could the queries be batched?", new=False)

    assert outcome.ok and outcome.answer == "No batch query exists yet." and outcome.turn == 2
    assert [f.investigator for f in outcome.findings] == ["db"]
    assert outcome.findings[0].reads == 0 and outcome.findings[0].refs == ("db/queries.py:1",)
    # only the new calls were made: the lead's two and the db investigator's one, nothing of the first round
    assert len(model.calls) == 3
    paid = _calls(db)
    assert all(n == 1 for n in paid.values()), paid
    assert paid - paid_before == Counter({("lead", 3): 1, ("lead", 4): 1, ("expert:db", 3): 1})
    # the investigator's new request still holds the file it read for the first question
    db_request = next(r for r in model.calls if "You are `db`" in r.system)
    held = [m.content for m in db_request.messages if isinstance(m, ToolResultMessage) and m.name == "read_file"]
    assert held and "SELECT" in held[0]
    store = SQLiteEventStore(db)
    answered = [e for e in store.events(RUN, agent="expert:db", kinds=["answer"]) if isinstance(e, QuestionAnswered)]
    assert [a.reads for a in answered] == [1, 0]
    store.close()


def test_the_cost_of_an_investigation_weighs_follow_ups_only_and_speaks_of_no_speed_up(
    shop: Repo, tmp_path: Path
) -> None:
    db = tmp_path / "events.db"
    _ask(shop, db, _model(follow_up=True), QUESTION, new=True)
    _ask(shop, db, _model(follow_up=True), "Could the queries be batched?", new=False)
    store = SQLiteEventStore(db)
    costs = cost_breakdown(store.events(RUN))
    store.close()

    console = Console(record=True, width=200)
    render_cost(console, costs)
    text = console.export_text()
    assert "speed-up" not in text and "no agent busy" not in text and "time: " in text
    assert "reads: read, search and list calls made answering; calls: model calls" in text
    # the three first answers are the investigation; the one follow-up is what is weighed against a saving
    assert "for the first answers of 3 investigator(s); follow-ups: " in text and "answering 1 question(s)" in text
    assert "only follow-up answers are weighed" in text
    data = costs.as_json()
    assert data["kind"] == "investigation" and "speedup" not in data["time"]
    db_cost = next(e for e in costs.experts if e.name == "db")
    assert db_cost.origin == "investigation" and db_cost.weighed_answers == 1 and db_cost.answered == 2


def test_a_question_cut_short_is_answered_once_before_the_follow_up(shop: Repo, tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    slow = _model(follow_up=True)
    slow.conversations[0].turns[1] = slow.conversations[0].turns[1].model_copy(update={"delay": 60})

    async def cut_short() -> None:
        combining = asyncio.Event()  # the investigators have all reported; the lead is combining their findings

        def watch(event: Event) -> None:
            if isinstance(event, ModelCallStarted) and (event.agent, event.call) == ("lead", 2):
                combining.set()

        store = ObservedStore(SQLiteEventStore(db), watch)
        base = RunBase(shop.head(), "main")
        work = asyncio.ensure_future(ask(Inquiry(shop, Settings(), slow, RunLog(store, RUN), QUESTION, base)))
        await combining.wait()
        work.cancel()
        with pytest.raises(asyncio.CancelledError):
            await work
        store.close()

    asyncio.run(cut_short())
    model = _model(follow_up=True)
    outcome = _ask(shop, db, model, "Could the queries be batched?", new=False)

    assert outcome.ok and outcome.turn == 2 and outcome.answer == "No batch query exists yet."
    store = SQLiteEventStore(db)
    replies = [e for e in store.events(RUN, agent="lead", kinds=["lead_replied"]) if isinstance(e, LeadReplied)]
    assert [(r.turn, r.text) for r in replies] == [(1, ANSWER), (2, "No batch query exists yet.")]
    store.close()
    # only the lead's second call, cut short before its answer came, was made again; nothing else was
    assert len(model.calls) == 4
    lead = {("lead", n): 1 for n in (1, 2, 3, 4)}
    investigators = {(f"expert:{a}", n): 1 for a in ("db", "api", "web") for n in (1, 2)}
    assert _calls(db) == Counter(lead) + Counter(investigators) + Counter({("lead", 2): 1, ("expert:db", 3): 1})


def test_with_no_areas_the_repository_is_split_by_directory(shop: Repo, tmp_path: Path) -> None:
    model = ScriptedModel(
        conversations=[
            {
                "name": "lead",
                "match": "You lead an investigation",
                "turns": [
                    _call("investigate", question=QUESTION),
                    {"expect": "## `web` on web/**", **_call("answer", answer="split", disagreements="none")},
                ],
            },
            *(
                {"name": n, "match": f"You are `{n}`", "turns": [_answer(f"{n} looked")]}
                for n in ("api", "db", "web", "top")
            ),
        ]
    )
    outcome = _ask(shop, tmp_path / "events.db", model, QUESTION, new=True)
    model.assert_complete()
    assert sorted(f.investigator for f in outcome.findings) == ["api", "db", "top", "web"]
    assert dict((f.investigator, f.area) for f in outcome.findings)["top"] == ("alpha.py", "beta.py", "gamma.py")


def test_split_areas_descends_into_a_lone_directory_and_caps_the_count() -> None:
    files = ["src/app/a.py", "src/app/b.py", "src/db/c.py", "src/ui/d.js", "src/main.py"]
    areas = split_areas(files, "q?", most=3)
    assert [(a.name, a.paths) for a in areas] == [
        ("app", ["src/app/**"]),
        ("db", ["src/db/**"]),
        ("other", ["src/ui/**", "src/main.py"]),
    ]
    assert all(a.question == "q?" for a in areas)


def _calls(db: Path) -> Counter[tuple[str, int]]:
    store = SQLiteEventStore(db)
    paid = Counter((e.agent, e.call) for e in store.events(RUN) if isinstance(e, ModelCallStarted))
    store.close()
    return paid


def _plait(repo: Repo, tmp_path: Path, *args: str, command: str = "ask", columns: int = 200) -> Any:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "COLUMNS": str(columns),
    }
    argv = [sys.executable, "-m", "plait", command, *args, "-C", str(repo.root)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def test_plait_ask_prints_the_answer_and_follows_up(shop: Repo, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"conversations": _model(follow_up=True).conversations}, default=_dump))

    first = _plait(shop, tmp_path, QUESTION, "--model", f"scripted:{script}", "--json")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["answer"] == ANSWER and data["disagreements"] == DISAGREE and data["model_calls"] == 8
    # a scripted model has no price: its cost is unknown, not free
    assert data["cost_usd"] is None and data["total_cost_usd"] is None and data["priced"] is False
    assert {f["investigator"]: f["references"] for f in data["findings"]}["web"] == ["web/app.js:2"]
    assert "posted a finding about web/app.js" in first.stderr  # progress lines go to stderr
    assert "api posted a finding about api/checkout.py, db/queries.py\n" in first.stderr  # each file once
    assert "api answered after 1 read/search call(s)" in first.stderr

    again = _plait(shop, tmp_path, "Could the queries be batched?", "--follow-up", data["run_id"])
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("No batch query exists yet.")
    assert "db on db/**" in again.stdout and "a batch one must be added" in again.stdout
    assert "  references: db/queries.py:1\n" in again.stdout
    assert f"run {data['run_id']} · 3 model calls, cost unknown" in again.stdout
    assert "(the run so far: 11 model calls, cost unknown" in again.stdout

    # the run id is never cut, even at 80 columns: it is what --follow-up takes
    listed = _plait(shop, tmp_path, command="runs", columns=80)
    assert listed.returncode == 0 and data["run_id"] in listed.stdout, listed.stdout
    assert all(len(line) <= 80 for line in listed.stdout.splitlines()) and "Why is checkout" in listed.stdout
    # the transcript shows what the user asked and what the lead answered, in full, and promises no diff
    shown = _plait(shop, tmp_path, data["run_id"], command="show", columns=80)
    assert shown.returncode == 0, shown.stderr
    flat = " ".join(shown.stdout.replace("│", " ").split())
    assert "the user, question 1" in shown.stdout and "the user, question 2" in shown.stdout
    assert "Could the queries be batched?" in flat and " ".join(ANSWER.split()) in flat
    assert "disagreements: " + " ".join(DISAGREE.split()) in flat
    assert "diff --git" not in shown.stdout and "lead task" not in shown.stdout  # the question is not shown twice


def test_plait_ask_without_an_api_key_is_one_line(shop: Repo, tmp_path: Path) -> None:
    result = _plait(shop, tmp_path, QUESTION, "--model", "openai:gpt-5.1")
    assert result.returncode == 4 and result.stderr.strip().count("\n") == 0
    assert "OPENAI_API_KEY is not set" in result.stderr
    assert not (shop.common_dir / "plait" / "events.db").exists()  # nothing was started


def _dump(value: object) -> object:
    assert isinstance(value, BaseModel)
    return value.model_dump(exclude_none=True)
