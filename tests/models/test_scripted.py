"""The models that need no provider: `ScriptedModel` and `FunctionModel`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.errors import ScriptError
from plait.messages import Model, ModelRequest, ModelResponse, ToolResultMessage, Usage, UserMessage
from plait.models import FunctionModel, ScriptedModel


def _request(result: str | None = None) -> ModelRequest:
    messages: list[UserMessage | ToolResultMessage] = [UserMessage(text="go")]
    if result is not None:
        messages.append(ToolResultMessage(call_id="c1", name="read_file", content=result))
    return ModelRequest(system="sys", messages=tuple(messages))


def test_plays_turns_in_order_and_records_calls() -> None:
    model = ScriptedModel(
        [
            {"text": "Looking.", "tool_calls": [{"name": "list_files", "arguments": {"pattern": "*.py"}}]},
            {"tool_calls": [{"name": "finish", "arguments": {"summary": "Done."}, "id": "mine"}]},
        ]
    )
    assert isinstance(model, Model)
    first = asyncio.run(model.complete(_request()))
    second = asyncio.run(model.complete(_request("a.py")))
    assert first.text == "Looking."
    [call] = first.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_1_1", "list_files", {"pattern": "*.py"})
    assert first.stop_reason == "tool_use"
    assert second.tool_calls[0].id == "mine"
    assert model.calls == [_request(), _request("a.py")]
    model.assert_complete()


def test_a_call_beyond_the_script_fails() -> None:
    model = ScriptedModel([{"text": "only"}], name="scripted:short")
    asyncio.run(model.complete(_request()))
    with pytest.raises(ScriptError, match="scripted:short has 1 turns; call 2 has none"):
        asyncio.run(model.complete(_request()))


def test_assert_complete_reports_unused_turns() -> None:
    model = ScriptedModel([{"text": "a"}, {"text": "b"}])
    asyncio.run(model.complete(_request()))
    with pytest.raises(ScriptError, match="played 1 of 2 turns"):
        model.assert_complete()


def test_expect_checks_the_last_tool_result() -> None:
    model = ScriptedModel([{"expect": "def total(", "text": "ok"}, {"expect": "missing", "text": "no"}])
    assert asyncio.run(model.complete(_request("def total(x):"))).text == "ok"
    with pytest.raises(ScriptError, match="turn 2 expected the last tool result to contain 'missing'"):
        asyncio.run(model.complete(_request("something else")))


def test_malformed_string_arguments_become_none() -> None:
    model = ScriptedModel([{"tool_calls": [{"name": "edit", "arguments": '{"path": "a.py", '}]}])
    [call] = asyncio.run(model.complete(_request())).tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '{"path": "a.py", '


def test_usage_is_given_or_estimated() -> None:
    model = ScriptedModel([{"text": "x" * 40, "usage": {"input_tokens": 7, "output_tokens": 2}}, {"text": "x" * 40}])
    assert asyncio.run(model.complete(_request())).usage == Usage(input_tokens=7, output_tokens=2)
    estimated = asyncio.run(model.complete(_request())).usage
    assert estimated.output_tokens == 10
    assert estimated.input_tokens > 0


def test_invalid_turn_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="invalid script turn"):
        ScriptedModel([{"txt": "typo"}])


def test_from_file(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("turns:\n  - text: hi\n    tool_calls:\n      - {name: finish, arguments: {summary: ok}}\n")
    model = ScriptedModel.from_file(path)
    assert model.name == f"scripted:{path}"
    assert asyncio.run(model.complete(_request())).tool_calls[0].arguments == {"summary": "ok"}


def test_from_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read script"):
        ScriptedModel.from_file(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - text: [1, 2]\n")
    with pytest.raises(ScriptError, match=r"bad.yaml is invalid at turns.0.text"):
        ScriptedModel.from_file(bad)


def test_function_model_sync() -> None:
    model = FunctionModel(lambda request: ModelResponse(text=f"{len(request.messages)} messages"))
    response = asyncio.run(model.complete(_request("r")))
    assert response.text == "2 messages"
    assert response.usage.input_tokens > 0
    assert model.calls == [_request("r")]


def test_function_model_async_keeps_given_usage() -> None:
    async def answer(request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(0)
        return ModelResponse(text="async", usage=Usage(input_tokens=1, output_tokens=1))

    model = FunctionModel(answer, name="function:mine")
    response = asyncio.run(model.complete(_request()))
    assert (response.text, response.usage, model.name) == (
        "async",
        Usage(input_tokens=1, output_tokens=1),
        "function:mine",
    )


def test_conversations_answer_each_agent_by_its_own_history() -> None:
    from plait.messages import AssistantMessage, ModelRequest, UserMessage
    from plait.models.scripted import ScriptedModel as Scripted

    model = Scripted(
        conversations=[
            {"name": "alpha", "match": "task alpha", "turns": [{"text": "a1"}, {"text": "a2"}]},
            {"name": "beta", "match": "task beta", "turns": [{"text": "b1"}]},
        ]
    )

    def ask(task: str, history: int) -> str:
        messages: list[UserMessage | AssistantMessage | ToolResultMessage] = [UserMessage(text=task)]
        for _ in range(history):
            messages.append(AssistantMessage(text="x"))
            messages.append(UserMessage(text="go on"))
        return asyncio.run(model.complete(ModelRequest(system="s", messages=tuple(messages)))).text

    assert ask("task beta", 0) == "b1"
    assert ask("task alpha", 0) == "a1"
    with pytest.raises(ScriptError, match="alpha"):
        model.assert_complete()
    assert ask("task alpha", 1) == "a2"
    assert ask("task alpha", 1) == "a2"  # the same request gets the same answer: a replay is safe
    model.assert_complete()
    with pytest.raises(ScriptError, match=r"\(beta\) has 1 turns; call 2 has none"):
        ask("task beta", 1)
    with pytest.raises(ScriptError, match="no conversation matches"):
        ask("task gamma", 0)


def test_a_conversation_counts_the_turns_a_compaction_summarised() -> None:
    from plait.compaction_mark import SUMMARY_HEADER
    from plait.messages import AssistantMessage, ToolCall

    turns = [{"text": f"turn {i}"} for i in range(1, 8)]
    model = ScriptedModel(conversations=[{"match": "brief", "turns": turns}])
    call = ToolCall(id="c", name="list_files", arguments={})
    messages = (
        UserMessage(text="brief"),
        UserMessage(text=f"{SUMMARY_HEADER} (steps 1-4; tool outputs are elided):\nstep 1: ..."),
        AssistantMessage(tool_calls=(call,)),
        ToolResultMessage(call_id="c", name="list_files", content="a.py"),
    )
    response = asyncio.run(model.complete(ModelRequest(system="sys", messages=messages)))
    assert response.text == "turn 6"
