"""Context budget: older steps are summarised near the budget; the brief, the last steps and notes survive."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from plait.agent.context import (
    DEFAULT_CONTEXT,
    Compaction,
    Compactor,
    ContextBudget,
    context_budget,
)
from plait.agent.loop import Agent
from plait.agent.prompts import task_prompt
from plait.agent.tools import Toolbox
from plait.compaction_mark import SUMMARY_HEADER
from plait.coord.experts import Expert, ExpertSpec
from plait.events import ContextCompacted, ModelCallStarted, QuestionAnswered, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    RetryHook,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from plait.models import PriceTable, ScriptedModel
from plait.settings import Settings, load_settings
from plait.workspace import LocalShell, Repo

BRIEF = UserMessage(text="Your task:\n\nfix add. You use the interface ledger-api: `def post(entry) -> int`")
BIG = "\n".join(f"{i}: OLD-CONTENT line {i}" for i in range(1, 201))
NOTE = "Notes from the rest of the run:\n\n[ledger-api] from api about src/ledger.py:\npost now returns an int id"


def _step(n: int, *calls: tuple[str, dict[str, Any], str], text: str = "") -> list[Message]:
    made = [ToolCall.parse(f"c{n}_{i}", name, args) for i, (name, args, _) in enumerate(calls)]
    results = [
        ToolResultMessage(call_id=c.id, name=c.name, content=out, is_error=out.startswith("ERR"))
        for c, (_, _, out) in zip(made, calls, strict=True)
    ]
    return [AssistantMessage(text=text, tool_calls=tuple(made)), *results]


def _conversation() -> list[Message]:
    return [
        BRIEF,
        *_step(1, ("read_file", {"path": "src/x.py"}, BIG), text="Let me look around first."),
        *_step(2, ("edit_file", {"path": "src/x.py", "old": "a", "new": "b"}, "edited src/x.py")),
        UserMessage(text=NOTE),
        *_step(3, ("run", {"command": "pytest -q"}, "exit code 1\nFAILED test_x"), ("search", {"pattern": "x"}, "")),
        AssistantMessage(text="thinking aloud"),
        UserMessage(text="Your reply called no tool. Call a tool to continue."),
        *_step(5, ("write_file", {"path": "a.txt", "content": "z"}, "ERR: a.txt is outside the worktree")),
        *_step(6, ("read_file", {"path": "src/y.py"}, "1: TAIL-CONTENT")),
    ]


def _compact(
    messages: Sequence[Message], tokens: int, *, budget: int = 10_000, keep: int = 2, target: float = 0.8
) -> Compaction | None:
    """A compaction of `messages`, the last request having measured `tokens`; by default, only down to the threshold
    (what a summary holds is tested with it; how deep a compaction goes, with the default target)."""
    compactor = Compactor(ContextBudget(tokens=budget, keep_last=keep, target=target))
    compactor.measured(messages, tokens)
    steps = sum(isinstance(m, AssistantMessage) for m in messages)
    return compactor.compact(messages, steps)


def _paired(messages: Sequence[Message]) -> bool:
    """Every tool call is followed by its result, and every result follows its call."""
    for i, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            following = messages[i + 1 : i + 1 + len(message.tool_calls)]
            ids = [m.call_id for m in following if isinstance(m, ToolResultMessage)]
            if ids != [c.id for c in message.tool_calls]:
                return False
        elif isinstance(message, ToolResultMessage) and not isinstance(
            messages[i - 1], AssistantMessage | type(message)
        ):
            return False
    return True


def _text(messages: Sequence[Message]) -> str:
    parts = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            parts += [m.text, *(c.raw_arguments for c in m.tool_calls)]
        else:
            parts.append(m.text if isinstance(m, UserMessage) else m.content)
    return "\n".join(parts)


def test_below_the_threshold_the_conversation_is_left_alone() -> None:
    assert _compact(_conversation(), 7_999) is None
    assert _compact(_conversation(), 8_000) is not None


def test_the_brief_and_the_last_steps_stay_verbatim() -> None:
    messages = _conversation()
    done = _compact(messages, 8_500)
    assert done is not None and done.tokens_after < 8_000 <= done.tokens_before
    tail = messages[-4:]  # steps 5 and 6, each with its result
    assert done.messages[0] == BRIEF and done.messages[2:] == tail
    assert isinstance(done.messages[1], UserMessage) and done.messages[1].text.startswith(SUMMARY_HEADER)
    assert _paired(done.messages) and done.summarised == 4 and done.messages_before == len(messages)
    assert "OLD-CONTENT" in _text(messages) and "OLD-CONTENT" not in _text(done.messages)


def test_the_summary_names_each_elided_call_and_how_it_went() -> None:
    done = _compact(_conversation(), 8_500)
    assert done is not None
    summary = done.messages[1]
    assert isinstance(summary, UserMessage)
    lines = summary.text.splitlines()
    assert "(steps 1-4;" in lines[0]
    assert lines[1:] == [
        "step 1: you said: Let me look around first.",
        "step 1: read_file src/x.py → 200 lines (elided; read_file again if you need it)",
        "step 2: edit_file src/x.py → ok",
        "notes delivered before step 3:",
        "  [ledger-api] from api about src/ledger.py:",
        "  post now returns an int id",
        "step 3: run `pytest -q` → exit code 1",
        "step 3: search 'x' in . → 0 lines (elided; search again if you need it)",
        "step 4: you said: thinking aloud",
        "step 4: replied without calling a tool",
    ]


def test_a_long_note_is_shortened_and_says_so_never_dropped() -> None:
    messages = _conversation()
    messages[5] = UserMessage(text="Notes from the rest of the run:\n\n" + "the schema changed; " * 300)
    done = _compact(messages, 8_500)
    assert done is not None
    text = _text(done.messages[1:2])
    assert "notes delivered before step 3:" in text and "the schema changed; " in text
    assert "more characters)" in text and len(text) < 3_000


@pytest.mark.parametrize("keep", [1, 2, 3, 4, 5, 9])
@pytest.mark.parametrize("tokens", [8_000, 20_000])
def test_a_tool_call_is_never_split_from_its_result(keep: int, tokens: int) -> None:
    done = _compact(_conversation(), tokens, keep=keep)
    assert done is not None
    assert _paired(done.messages) and isinstance(done.messages[2], AssistantMessage)
    assert done.messages[0] == BRIEF and len(done.messages) < len(_conversation())


def test_when_the_last_steps_alone_are_too_big_fewer_are_kept() -> None:
    done = _compact(_conversation(), 50_000, keep=4)
    assert done is not None and done.tokens_after >= 8_000
    assert done.messages[2:] == _conversation()[-2:]  # only the last step is left whole


def test_the_same_conversation_compacts_to_the_same_messages() -> None:
    first, second = _compact(_conversation(), 9_000), _compact(_conversation(), 9_000)
    assert first is not None and second is not None
    assert [m.model_dump() for m in first.messages] == [m.model_dump() for m in second.messages]
    assert first.data() == second.data()


def test_a_second_compaction_carries_the_first_summary_on() -> None:
    once = _compact(_conversation(), 8_500)
    assert once is not None
    grown = [
        *once.messages,
        *_step(7, ("list_files", {"pattern": "*.py"}, "a.py\nb.py")),
        *_step(8, ("finish", {}, "")),
    ]
    compactor = Compactor(ContextBudget(tokens=10_000, keep_last=2, target=0.8))
    compactor.measured(grown, 9_000)
    twice = compactor.compact(grown, 8)
    assert twice is not None and _paired(twice.messages)
    text = _text(twice.messages[1:2])
    assert text.count(SUMMARY_HEADER) == 1 and "(steps 1-7;" in text  # the tail alone was too big: one step kept
    assert "step 1: read_file src/x.py" in text and "post now returns an int id" in text
    assert "step 5: write_file a.txt → error: ERR: a.txt is outside the worktree" in text
    assert "step 6: read_file src/y.py → 1 lines" in text and "TAIL-CONTENT" not in text
    assert "step 7: list_files *.py → 2 lines" in text and twice.messages[2:] == grown[-2:]


def test_a_later_prompt_is_kept_verbatim_in_the_summary() -> None:
    question = UserMessage(text="Question 2, from `ui`:\nWhich table holds entries?\n\nAnswer it with the answer tool.")
    messages = [
        BRIEF,
        *_step(1, ("read_file", {"path": "src/db.py"}, BIG)),
        *_step(2, ("answer", {"answer": "connect(url) at src/db.py:1"}, "answered.")),
        question,
        *_step(3, ("read_file", {"path": "src/schema.py"}, "1: TABLE entries")),
        *_step(4, ("read_file", {"path": "src/more.py"}, "1: more")),
    ]
    done = _compact(messages, 9_000, keep=1)
    assert done is not None
    text = _text(done.messages[1:2])
    assert question.text in text and "step 2: answer" in text and "connect(url) at src/db.py:1" in text


def test_with_nothing_before_the_last_step_nothing_is_compacted() -> None:
    assert _compact([BRIEF, *_step(1, ("read_file", {"path": "x"}, BIG))], 1_000_000) is None


def test_budgets_come_from_the_setting_then_the_built_in_table() -> None:
    assert context_budget("anthropic:claude-sonnet-4-5").tokens == 200_000
    assert context_budget("openai:gpt-5.1").tokens == 272_000
    assert context_budget("openai:gpt-4o-mini").tokens == 128_000
    assert context_budget("scripted:inline").tokens == DEFAULT_CONTEXT
    own = {"anthropic:*": 50_000, "anthropic:claude-*": 90_000, "scripted:*": 4_000}
    assert context_budget("anthropic:claude-sonnet-4-5", own).tokens == 90_000  # the longest glob wins
    assert context_budget("scripted:demo.yaml", own).tokens == 4_000
    assert context_budget("openai:gpt-5.1", own).tokens == 272_000
    assert context_budget("x", {}).limit == int(DEFAULT_CONTEXT * 0.8)


def test_the_setting_is_read_from_the_environment_and_validated(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PLAIT_CONTEXT_TOKENS": '{"scripted:*": 5000}'}
    assert load_settings(None, env=env).settings.context_tokens == {"scripted:*": 5000}
    with pytest.raises(ValidationError):
        Settings(context_tokens={"scripted:*": 0})


# an agent that compacts, through the real loop


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _turns() -> list[dict[str, Any]]:
    test = f"{sys.executable} -m pytest -q -p no:cacheprovider test_calc.py"
    used = [500, 4_600, 4_700, 9_000, 5_200, 5_300]
    turns: list[dict[str, Any]] = [
        {"text": "Reading the big module first.", "tool_calls": [_call("read_file", path="big.py")]},
        {"tool_calls": [_call("read_file", path="calc.py")]},
        {"tool_calls": [_call("read_file", path="test_calc.py")]},
        {"tool_calls": [_call("edit_file", path="calc.py", old="a - b", new="a + b")]},
        {"tool_calls": [_call("run", command=test)]},
        {"expect": "1 passed", "tool_calls": [_call("finish", summary="add adds")]},
    ]
    return [{**t, "usage": {"input_tokens": n, "output_tokens": 50}} for t, n in zip(turns, used, strict=True)]


class Crash(BaseException):
    """Stands for the process dying during a model call."""


class _DiesAt:
    """A scripted model whose process dies at call `at`."""

    def __init__(self, inner: ScriptedModel, at: int) -> None:
        self.inner, self.at = inner, at
        self.calls: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(self, request: ModelRequest, *, on_retry: RetryHook | None = None) -> ModelResponse:
        self.calls.append(request)
        if len(self.calls) == self.at:
            raise Crash
        return await self.inner.complete(request, on_retry=on_retry)


def _agent(root: Path, store: SQLiteEventStore, model: ScriptedModel | _DiesAt, *, resumed: bool = False) -> Agent:
    # a board delivers a note once: to a resumed agent, the log gives back what it was given
    notes = [] if resumed else [[], ["[ledger-api] from api:\nadd must stay a pure function"]]
    agent = Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=model,
        toolbox=Toolbox(root, LocalShell(), command_timeout=60),
        prices=PriceTable(),
        system="You are a test agent.",
        notes=lambda: notes.pop(0) if notes else [],
        context=ContextBudget(tokens=10_000, keep_last=2),
    )
    return agent


def _context_decisions(store: SQLiteEventStore) -> list[ContextCompacted]:
    return [e for e in store.events("r", kinds=["compacted"]) if isinstance(e, ContextCompacted)]


@pytest.fixture
def big_repo(repo: Repo) -> Repo:
    (repo.root / "big.py").write_text("".join(f"PADDING_{i} = {i}\n" for i in range(800)))
    return repo


def test_an_agent_near_its_budget_sends_the_brief_a_summary_and_its_last_steps(big_repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    model = ScriptedModel(_turns())
    result = asyncio.run(_agent(big_repo.root, store, model).run("fix add"))

    model.assert_complete()
    assert result.ok and result.summary == "add adds"
    before, after = model.calls[3].messages, model.calls[4].messages
    assert "PADDING_1 = 1" in _text(before) and "PADDING_1 = 1" not in _text(after)
    assert after[0] == UserMessage(text=task_prompt("fix add")) and _paired(after)
    summary = after[1]
    assert isinstance(summary, UserMessage) and summary.text.startswith(SUMMARY_HEADER)
    assert "step 1: you said: Reading the big module first." in summary.text
    assert "step 1: read_file big.py → " in summary.text and "step 2: read_file calc.py → " in summary.text
    assert "add must stay a pure function" in summary.text  # the note delivered before step 2
    # deep, to half the budget: only the last step is whole (the edit of step 4); the test file read at step 3
    # is summarised, although keeping it would have fitted under the threshold
    assert "step 3: read_file test_calc.py → " in summary.text
    assert isinstance(after[2], AssistantMessage) and after[2].tool_calls[0].arguments["path"] == "calc.py"
    assert model.calls[5].messages[: len(after)] == after  # compacted once; the next request only appends
    [decision] = _context_decisions(store)
    assert decision.step == 5 and decision.summarised == 3
    assert decision.messages_before > decision.messages_after == len(after)


def test_a_finished_agent_that_compacted_replays_from_the_log_alone(big_repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    assert asyncio.run(_agent(big_repo.root, store, ScriptedModel(_turns())).run("fix add")).ok

    again = ScriptedModel([])
    agent = _agent(big_repo.root, store, again, resumed=True)
    result = asyncio.run(agent.run("fix add"))  # a StateError here: a request differs from the logged one
    assert result.ok and result.summary == "add adds" and again.calls == []
    assert agent.journal.replayed == 6 and len(_context_decisions(store)) == 1


def test_an_agent_that_died_after_compacting_resumes_with_the_same_request(big_repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    dying = _DiesAt(ScriptedModel(_turns()), at=5)
    with pytest.raises(Crash):
        asyncio.run(_agent(big_repo.root, store, dying).run("fix add"))
    assert len(_context_decisions(store)) == 1  # logged before the call that died

    rest = ScriptedModel(_turns()[4:])
    result = asyncio.run(_agent(big_repo.root, store, rest, resumed=True).run("fix add"))
    rest.assert_complete()
    assert result.ok and len(rest.calls) == 2
    assert rest.calls[0].messages == dying.calls[4].messages
    fifth = [e for e in store.events("r", kinds=["model_request"]) if isinstance(e, ModelCallStarted) and e.call == 5]
    assert len(fifth) == 2 and fifth[0].req_hash == fifth[1].req_hash
    assert len(_context_decisions(store)) == 1


def test_an_expert_that_compacted_counts_its_reads_from_the_log(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    (root / "src" / "db.py").write_text("def connect(url):\n    retries = 3\n")
    (root / "src" / "pool.py").write_text("POOL_SIZE = 8\n")

    def turn(tokens: int, name: str, **arguments: Any) -> dict[str, Any]:
        return {"tool_calls": [_call(name, **arguments)], "usage": {"input_tokens": tokens, "output_tokens": 5}}

    model = ScriptedModel(
        [
            turn(500, "read_file", path="src/db.py"),
            turn(900, "answer", answer="connect(url) at src/db.py:1"),
            turn(1_900, "read_file", path="src/pool.py"),
            turn(2_000, "read_file", path="src/db.py", start_line=2),
            turn(600, "answer", answer="a pool of 8 (src/pool.py:1)"),
        ]
    )
    store = SQLiteEventStore(tmp_path / "e.db")
    spec = ExpertSpec(name="db", area=["src/**"], brief="The database layer.")
    budget = ContextBudget(tokens=2_000, keep_last=1)
    expert = Expert(spec, log=RunLog(store, "r"), model=model, prices=PriceTable(), root=root, context=budget)

    async def ask() -> list[str]:
        return [(await expert.ask("api", q, key=q)).text for q in ("How do I connect?", "Is there a pool?")]

    assert asyncio.run(ask()) == ["connect(url) at src/db.py:1", "a pool of 8 (src/pool.py:1)"]
    last = model.calls[-1]
    assert "Is there a pool?" in _text(last.messages) and "POOL_SIZE" not in _text(last.messages)
    answered = [e for e in store.events("r", kinds=["answer"]) if isinstance(e, QuestionAnswered)]
    assert [a.reads for a in answered] == [1, 2]
    assert len(_context_decisions(store)) >= 1
