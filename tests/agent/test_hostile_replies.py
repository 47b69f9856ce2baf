"""Whatever a model sends (unpaired surrogates, deep nesting, huge strings, cut or refused replies, an exception)
becomes an observation or a clear stop: logging the step never raises, and the log stays readable."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plait.agent.loop import Agent, AgentLimits, AgentResult
from plait.agent.tools import Toolbox
from plait.events import AgentStopped, SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall, ToolResultMessage, UserMessage
from plait.models import FunctionModel, PriceTable
from plait.workspace import LocalShell, Repo

Reply = Callable[[int, ModelRequest], ModelResponse]


def _agent(root: Path, reply: Reply, store: SQLiteEventStore, **limits: int) -> tuple[Agent, FunctionModel]:
    def answer(request: ModelRequest) -> ModelResponse:
        return reply(sum(isinstance(m, AssistantMessage) for m in request.messages), request)

    model = FunctionModel(answer)
    agent = Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=model,
        toolbox=Toolbox(root, LocalShell(), command_timeout=30, output_limit=4000),
        prices=PriceTable(),
        system="You are a test agent.",
        limits=AgentLimits(**limits),
    )
    return agent, model


def _calls(*calls: tuple[str, dict[str, Any] | str]) -> ModelResponse:
    return ModelResponse(tool_calls=tuple(ToolCall.parse(f"c{i}", name, args) for i, (name, args) in enumerate(calls)))


def _direct(*calls: tuple[str, dict[str, Any]]) -> ModelResponse:
    """Calls as a model that builds them itself sends them, unchecked by any provider's parsing."""
    return ModelResponse(tool_calls=tuple(ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)))


def _finish(summary: str = "done") -> ModelResponse:
    return _calls(("finish", {"summary": summary}))


def _results(store: SQLiteEventStore) -> list[ToolReturned]:
    return [e for e in store.events("r") if isinstance(e, ToolReturned)]


def _run(agent: Agent) -> AgentResult:
    return asyncio.run(agent.run("do it"))


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for _ in range(levels):
        node = {"a": node}
    return node


def test_unpaired_surrogates_become_a_clear_observation_and_the_log_stays_readable(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        if turn == 0:
            response = _direct(
                ("write_file", {"path": "\ud800.txt", "content": "x"}), ("run", {"command": "ls \udfff"})
            )
            return response.model_copy(update={"text": "Writing \ud800 now."})
        return _finish()

    agent, model = _agent(repo.root, reply, store)
    result = _run(agent)

    assert result.ok, result.summary
    write, run = _results(store)[:2]
    assert write.format_error and "the path contains an unpaired surrogate \\ud800; use valid UTF-8" in write.output
    assert run.format_error and "the command contains an unpaired surrogate \\udfff" in run.output
    assert not any(p.name.endswith(".txt") and p.name != "test_calc.py" for p in repo.root.iterdir())
    said = model.calls[1].messages[1]
    assert isinstance(said, AssistantMessage) and said.text == "Writing \ufffd now."
    assert [e.kind for e in store.events("r")][-1] == "agent_stopped"


def test_arguments_nested_too_deep_are_a_malformed_call(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        if turn < 2:  # built without JSON text: json.dumps itself gives up on the deepest
            deep = {"path": "a.txt", "content": "x", "extra": _deep(600 if turn == 0 else 995)}
            return ModelResponse(tool_calls=(ToolCall(id=f"d{turn}", name="write_file", arguments=deep),))
        return _finish()

    agent, _ = _agent(repo.root, reply, store)
    result = _run(agent)

    assert result.ok, result.summary
    first, second = _results(store)[:2]
    for seen in (first, second):
        assert seen.format_error and "nested more than" in seen.output and len(seen.output) < 500
    assert not (repo.root / "a.txt").exists()


def test_a_huge_finish_summary_is_refused_with_the_cap_stated(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        return _direct(("finish", {"summary": "x" * 10_000_000})) if turn == 0 else _finish("short")

    agent, _ = _agent(repo.root, reply, store)
    result = _run(agent)

    assert result.ok and result.summary == "short"
    (refused,) = [r for r in _results(store) if r.format_error]
    assert "10,000,000 characters" in refused.output and "16,384" in refused.output and len(refused.output) < 500


def test_a_huge_path_or_tool_name_is_refused_without_being_echoed(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    huge = "d/" * 500_000

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        if turn == 0:
            return _direct(("read_file", {"path": huge}), ("write_file", {"path": huge, "content": "x"}), (huge, {}))
        return _finish()

    agent, _ = _agent(repo.root, reply, store, max_format_errors=4)
    assert _run(agent).ok
    results = _results(store)
    assert len(results) == 4 and all(r.format_error for r in results[:3])
    for seen in results[:3]:
        assert len(seen.output) < 1000 and str(repo.root) not in seen.output
    assert "4,096" in results[0].output


def test_tool_arguments_are_strict_about_booleans_and_integers(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        if turn == 0:
            edit = {"path": "calc.py", "old": "a", "new": "b", "replace_all": "yes"}
            return _calls(("edit_file", edit), ("read_file", {"path": "calc.py", "start_line": "2"}))
        return _finish()

    agent, _ = _agent(repo.root, reply, store)
    assert _run(agent).ok
    edit, read = _results(store)[:2]
    assert edit.format_error and "'replace_all'" in edit.output and "boolean" in edit.output
    assert read.format_error and "'start_line'" in read.output and "integer" in read.output
    assert (repo.root / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_a_reply_cut_at_the_output_limit_is_reported_as_cut(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        if turn == 0:
            cut = _calls(("write_file", '{"path": "big.py", "content": "def f():\\n'))
            return cut.model_copy(update={"stop_reason": "length"})
        if turn == 1:
            return ModelResponse(text="Let me write", stop_reason="length")
        return _finish()

    agent, model = _agent(repo.root, reply, store, max_output_tokens=500)
    assert _run(agent).ok
    (seen,) = _results(store)[:1]
    assert seen.format_error and "cut" in seen.output and "500" in seen.output
    assert "not a JSON object" not in seen.output
    nudge = model.calls[2].messages[-1]
    assert isinstance(nudge, UserMessage) and "cut" in nudge.text and "called no tool" not in nudge.text


def test_a_refusal_stays_in_the_conversation_and_two_in_a_row_stop_the_agent(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text=f"I can't help with that ({turn}).", stop_reason="refusal")

    agent, model = _agent(repo.root, reply, store)
    result = _run(agent)

    assert result.reason == "model_refused" and "I can't help with that (1)." in result.summary
    said, nudge = model.calls[1].messages[1:]
    assert isinstance(said, AssistantMessage) and said.text == "I can't help with that (0)."
    assert isinstance(nudge, UserMessage) and "refus" in nudge.text
    stopped = store.events("r", kinds=["agent_stopped"])[-1]
    assert isinstance(stopped, AgentStopped) and stopped.reason == "model_refused"


def test_an_unexpected_exception_from_the_model_is_logged_and_stops_the_agent(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        raise RuntimeError("the connection pool broke\nsecond line")

    agent, _ = _agent(repo.root, reply, store)
    result = _run(agent)

    assert result.reason == "model_error" and "RuntimeError: the connection pool broke" in result.summary
    assert "\n" not in result.summary
    assert [e.kind for e in store.events("r")][-3:] == ["model_request", "model_error", "agent_stopped"]


def test_a_tool_result_paired_with_each_call_of_a_cut_reply(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        if turn == 0:
            both = _calls(("list_files", {}), ("write_file", '{"path": "x'))
            return both.model_copy(update={"stop_reason": "length"})
        return _finish()

    agent, model = _agent(repo.root, reply, store)
    assert _run(agent).ok
    answered = [m for m in model.calls[1].messages if isinstance(m, ToolResultMessage)]
    assert [m.call_id for m in answered] == ["c0", "c1"] and not answered[0].is_error


def test_a_file_name_that_is_not_utf8_cannot_break_the_log(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    (repo.root / os.fsdecode(b"bad\xff.txt")).write_bytes(b"x\n")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        return _calls(("list_files", {})) if turn == 0 else _finish()

    agent, model = _agent(repo.root, reply, store)
    assert _run(agent).ok
    (listed,) = _results(store)[:1]
    assert "bad\ufffd.txt" in listed.output


def test_a_reply_cut_before_any_tool_call_is_not_said_to_have_cut_one(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="First, a long plan", stop_reason="length") if turn == 0 else _finish()

    agent, model = _agent(repo.root, reply, store, max_output_tokens=500)
    assert _run(agent).ok
    nudge = model.calls[1].messages[-1]
    assert isinstance(nudge, UserMessage)
    assert "cut off at the output limit of 500 tokens before it called a tool" in nudge.text
    assert "the tool call it ended in" not in nudge.text


def test_a_refused_agent_is_told_that_refusing_again_ends_its_attempt(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")

    def reply(turn: int, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="No.", stop_reason="refusal") if turn == 0 else _finish()

    agent, model = _agent(repo.root, reply, store)
    assert _run(agent).ok
    nudge = model.calls[1].messages[-1]
    assert isinstance(nudge, UserMessage) and "call finish and say why" in nudge.text
    assert "refusing again ends" in nudge.text.lower()
