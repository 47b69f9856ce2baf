from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from plait.agent.loop import Agent, AgentLimits, AgentResult
from plait.agent.tools import Toolbox
from plait.events import AgentStopped, NotesDelivered, SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.messages import Model, ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel, PriceTable, ScriptedModel
from plait.workspace import LocalShell, Repo


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _agent(root: Path, model: Model, store: SQLiteEventStore, **limits: int) -> Agent:
    return Agent(
        log=RunLog(store, "r"),
        agent_id="main",
        model=model,
        toolbox=Toolbox(root, LocalShell(), command_timeout=30, output_limit=4000),
        prices=PriceTable(),
        system="You are a test agent.",
        limits=AgentLimits(**limits),
    )


def _run(agent: Agent, task: str = "fix add") -> AgentResult:
    return asyncio.run(agent.run(task))


def test_an_agent_reads_edits_runs_tests_and_finishes(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    model = ScriptedModel(
        [
            {"text": "Look first.", "tool_calls": [_call("read_file", path="calc.py")]},
            {"expect": "return a - b", "tool_calls": [_call("edit_file", path="calc.py", old="a - b", new="a + b")]},
            {"tool_calls": [_call("run", command=f"{sys.executable} -m pytest -q -p no:cacheprovider")]},
            {"expect": "1 passed", "tool_calls": [_call("finish", summary="add adds now")]},
        ]
    )
    result = _run(_agent(repo.root, model, store))

    model.assert_complete()
    assert result.ok and result.summary == "add adds now" and result.steps == 4
    assert (repo.root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    kinds = [e.kind for e in store.events("r")]
    assert kinds[0] == "prompt" and kinds[-1] == "agent_stopped"
    assert kinds.count("model_request") == kinds.count("model_response") == 4
    assert kinds.count("tool_call") == kinds.count("tool_result") == 4
    # every model call is logged before the tool calls it leads to
    assert kinds.index("model_response") < kinds.index("tool_call")
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


def test_the_model_sees_each_tool_result_paired_with_its_call(repo: Repo, tmp_path: Path) -> None:
    def reply(request: ModelRequest) -> ModelResponse:
        n = len(request.messages)
        if n == 1:
            return ModelResponse(tool_calls=(ToolCall.parse("a", "read_file", {"path": "calc.py"}),))
        return ModelResponse(tool_calls=(ToolCall.parse("b", "finish", {"summary": f"saw {n} messages"}),))

    model = FunctionModel(reply)
    result = _run(_agent(repo.root, model, SQLiteEventStore(tmp_path / "e.db")))
    last = model.calls[-1].messages
    assert result.summary == "saw 3 messages"
    assert last[-1].kind == "tool_result" and last[-1].call_id == "a" and "return a - b" in last[-1].content


def test_malformed_calls_become_observations_then_fail_the_agent(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "read_file", "arguments": '{"path": "calc.py"'}]},
            {"tool_calls": [_call("no_such_tool")]},
            {"tool_calls": [_call("read_file")]},
        ]
    )
    result = _run(_agent(repo.root, model, store, max_format_errors=3))
    assert result.reason == "format_errors"
    errors = [e for e in store.events("r") if isinstance(e, ToolReturned)]
    assert all(e.is_error for e in errors) and len(errors) == 3
    stopped = store.events("r", kinds=["agent_stopped"])[0]
    assert isinstance(stopped, AgentStopped) and stopped.reason == "format_errors"


def test_a_good_call_resets_the_count_of_format_errors(repo: Repo, tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [_call("nope")]},
            {"tool_calls": [_call("nope")]},
            {"tool_calls": [_call("list_files")]},
            {"tool_calls": [_call("nope")]},
            {"text": "only words"},
            {"tool_calls": [_call("finish", summary="ok")]},
        ]
    )
    assert _run(_agent(repo.root, model, SQLiteEventStore(tmp_path / "e.db"), max_format_errors=3)).ok
    nudge = model.calls[-1].messages[-1]
    assert isinstance(nudge, UserMessage) and "called no tool" in nudge.text


def test_the_step_limit_stops_the_agent_before_another_call(repo: Repo, tmp_path: Path) -> None:
    model = ScriptedModel([{"tool_calls": [_call("list_files")]}] * 2)
    result = _run(_agent(repo.root, model, SQLiteEventStore(tmp_path / "e.db"), max_steps=2))
    assert result.reason == "step_limit" and len(model.calls) == 2


def test_the_token_limit_stops_the_agent_before_another_call(repo: Repo, tmp_path: Path) -> None:
    turn = {"tool_calls": [_call("list_files")], "usage": {"input_tokens": 600, "output_tokens": 10}}
    model = ScriptedModel([turn, turn])
    result = _run(_agent(repo.root, model, SQLiteEventStore(tmp_path / "e.db"), max_tokens=1000))
    assert result.reason == "token_limit" and len(model.calls) == 2
    assert "1220 tokens" in result.summary


def test_a_model_failure_ends_the_agent_with_its_reason(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    result = _run(_agent(repo.root, ScriptedModel([]), store))
    assert result.reason == "model_error" and "has 0 turns" in result.summary
    assert [e.kind for e in store.events("r")][-2:] == ["model_error", "agent_stopped"]


def test_notes_from_the_run_enter_the_next_turn_and_are_logged(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    pending = [["the API now returns a dict"], []]
    agent = _agent(repo.root, ScriptedModel([{"tool_calls": [_call("finish", summary="ok")]}]), store)
    agent.notes = lambda: pending.pop(0) if pending else []
    model = agent.model
    assert _run(agent).ok
    assert isinstance(model, ScriptedModel)
    sent = model.calls[0].messages[-1]
    assert isinstance(sent, UserMessage) and "the API now returns a dict" in sent.text
    assert any(isinstance(e, NotesDelivered) for e in store.events("r"))


def test_cancelling_an_agent_records_that_it_was_interrupted(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    model = ScriptedModel([{"delay": 30, "tool_calls": [_call("finish", summary="never")]}])
    agent = _agent(repo.root, model, store)

    async def scenario() -> None:
        task = asyncio.ensure_future(agent.run("wait"))
        while not model.calls:  # noqa: ASYNC110 - the model is a plain object; polling its record is the seam
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    stopped = store.events("r", kinds=["agent_stopped"])
    assert len(stopped) == 1 and isinstance(stopped[0], AgentStopped) and stopped[0].reason == "interrupted"
