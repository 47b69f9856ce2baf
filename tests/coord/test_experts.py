"""Persistent experts: one conversation across questions, one reading of the code, rebuilt from the log."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.coord.asking import asking_tools
from plait.coord.experts import Expert, Experts, ExpertSpec, expert_id
from plait.events import ModelCallStarted, QuestionAnswered, SQLiteEventStore, ToolCalled
from plait.events.runlog import RunLog
from plait.messages import ToolCall, ToolResultMessage, UserMessage
from plait.models.pricing import PriceTable
from plait.models.scripted import ScriptedModel

RUN = "r1"


def _script() -> list[dict[str, object]]:
    def answer(text: str) -> dict[str, object]:
        return {"tool_calls": [{"name": "answer", "arguments": {"answer": text}}]}

    return [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "src/db.py"}}]},
        {"expect": "def connect", **answer("connect(url) at src/db.py:1")},
        answer("it retries 3 times (src/db.py:2)"),
        answer("no pool; one connection per call (src/db.py:1)"),
        answer("a fourth answer, after the resume"),
    ]


def _model() -> ScriptedModel:
    return ScriptedModel(conversations=[{"match": "You are `db`", "turns": _script()}])


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "db.py").write_text("def connect(url):\n    retries = 3\n")
    return root


def _expert(store: SQLiteEventStore, model: ScriptedModel, root: Path) -> Expert:
    spec = ExpertSpec(name="db", area=["src/db.py"], brief="The database layer.")
    return Expert(spec, log=RunLog(store, RUN), model=model, prices=PriceTable(), root=root)


def test_workers_share_one_reading(tmp_path: Path, checkout: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    model = _model()
    expert = _expert(store, model, checkout)
    experts = Experts([expert])

    async def main() -> list[str]:
        tools = [asking_tools(asker, experts) for asker in ("api", "ui", "api")]
        questions = ["How do I connect?", "How many retries?", "Is there a pool?"]
        calls = [
            tools[i].execute(ToolCall(id=f"c{i}", name="ask_expert", arguments={"expert": "db", "question": q}))
            for i, q in enumerate(questions)
        ]
        return [o.output for o in await asyncio.gather(*calls)]

    answers = asyncio.run(main())
    assert "connect(url) at src/db.py:1" in answers[0]
    assert "from what it had already read" in answers[1]
    reads = [e for e in store.events(RUN, agent=expert_id("db"), kinds=["tool_call"]) if isinstance(e, ToolCalled)]
    assert [e.call.name for e in reads] == ["read_file", "answer", "answer", "answer"]
    answered = [e for e in store.events(RUN, kinds=["answer"]) if isinstance(e, QuestionAnswered)]
    assert [a.reads for a in answered] == [1, 0, 0]
    assert all(a.read_tokens > 0 and a.usage.input_tokens > 0 for a in answered)
    # the third question's request still holds the file the expert read for the first
    last = model.calls[-1]
    held = [m for m in last.messages if isinstance(m, ToolResultMessage) and m.name == "read_file"]
    assert held and "retries = 3" in held[0].content
    asked = [m.text for m in last.messages if isinstance(m, UserMessage)]
    assert len(asked) == 3
    store.close()


def test_expert_is_rebuilt_from_the_log_without_paying_again(tmp_path: Path, checkout: Path) -> None:
    db = tmp_path / "events.db"
    store = SQLiteEventStore(db)
    first = _expert(store, _model(), checkout)

    async def three(expert: Expert) -> None:
        for i, q in enumerate(["connect?", "retries?", "pool?"]):
            await expert.ask("api", q, key=f"k{i}")

    asyncio.run(three(first))
    store.close()

    store = SQLiteEventStore(db)
    model = _model()
    again = _expert(store, model, checkout)
    # a question asked again with a logged key is answered from the log, not asked twice
    repeat = asyncio.run(again.ask("api", "retries?", key="k1"))
    assert repeat.text == "it retries 3 times (src/db.py:2)"
    assert model.calls == []
    fourth = asyncio.run(again.ask("ui", "anything else?", key="k3"))
    assert fourth.text == "a fourth answer, after the resume"
    assert len(model.calls) == 1  # questions 1-3 were read back from the journal
    assert len(model.calls[0].messages) > 6  # and the live call still carries the whole conversation
    started = [e for e in store.events(RUN, kinds=["model_request"]) if isinstance(e, ModelCallStarted)]
    assert len(started) == 5
    assert len([e for e in store.events(RUN, kinds=["expert"])]) == 1
    store.close()


def test_unknown_expert_is_an_observation(tmp_path: Path, checkout: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    experts = Experts([_expert(store, _model(), checkout)])
    tools = asking_tools("api", experts)
    assert any(s.name == "ask_expert" and "`db` owns src/db.py" in s.description for s in tools.specs())
    call = ToolCall(id="c", name="ask_expert", arguments={"expert": "web", "question": "?"})
    outcome = asyncio.run(tools.execute(call))
    assert outcome.is_error and "the experts are: db" in outcome.output
    store.close()


def test_an_answer_may_give_its_references_and_what_it_did_not_check(tmp_path: Path, checkout: Path) -> None:
    given = {"answer": "three retries", "references": ["src/db.py:2", " "], "not_checked": "the caller's timeout"}
    model = ScriptedModel(
        conversations=[{"match": "You are `db`", "turns": [{"tool_calls": [{"name": "answer", "arguments": given}]}]}]
    )
    store = SQLiteEventStore(tmp_path / "events.db")
    spec = ExpertSpec(name="db", area=["src/db.py"])
    expert = Expert(spec, log=RunLog(store, RUN), model=model, prices=PriceTable(), root=checkout, origin="session")

    answer = asyncio.run(expert.ask("lead", "How many retries?"))
    assert answer.references == ("src/db.py:2",) and answer.not_checked == "the caller's timeout"
    assert "three retries\nReferences: src/db.py:2\nNot checked: the caller's timeout" in answer.render()
    logged = [e for e in store.events(RUN, kinds=["answer"]) if isinstance(e, QuestionAnswered)]
    assert logged[0].references == ["src/db.py:2"] and logged[0].not_checked == "the caller's timeout"
    # a helper is told who asks it; the fields are optional for any expert but an investigator
    system = model.calls[0].system
    assert "The lead of a user's session asks you questions" in system and "coding agents" not in system
    schema = next(t for t in model.calls[0].tools if t.name == "answer").parameters
    assert schema["required"] == ["answer"] and "references" in schema["properties"]
    store.close()
