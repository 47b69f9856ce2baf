"""The LLM rung with scripted models: what it sends, what it accepts, and that no call is paid twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.errors import ModelError
from plait.events import ModelCallFinished, SQLiteEventStore
from plait.models import FunctionModel, ModelRequest, ModelResponse, ScriptedModel, ToolResultMessage, UserMessage
from plait.reconcile.llm_resolver import LLMResolver
from plait.reconcile.types import FileConflict, MergeContext, Resolution

BASE = "def greet(name):\n    return 'hello ' + name\n"
OURS = "def greet(name):\n    return 'hello, ' + name\n"
THEIRS = "def greet(name):\n    return 'hello ' + name.title()\n"
MERGED = (
    "def greet(name):\n<<<<<<< ours\n    return 'hello, ' + name\n=======\n"
    "    return 'hello ' + name.title()\n>>>>>>> theirs\n"
)
RESOLVED = "def greet(name):\n    return 'hello, ' + name.title()\n"
CONFLICT = FileConflict("greet.py", BASE, OURS, THEIRS, MERGED)
CONTEXT = MergeContext(
    ours_task="Put a comma after hello",
    theirs_task="Capitalise names",
    ours_intent="added the comma",
    theirs_intent="title-cased the name",
    notes=("greet() is used by the CLI banner",),
)


def resolve_call(content: str, **extra: object) -> dict[str, object]:
    return {"tool_calls": [{"name": "resolve", "arguments": {"content": content, **extra}}]}


def _run(resolver: LLMResolver, conflict: FileConflict = CONFLICT) -> Resolution | None:
    return asyncio.run(resolver.resolve(conflict, CONTEXT))


def test_a_resolve_call_is_accepted_and_the_prompt_carries_every_side_and_intent() -> None:
    model = ScriptedModel([resolve_call(RESOLVED)])
    resolution = _run(LLMResolver(model))
    assert resolution == Resolution("greet.py", RESOLVED, "llm", resolution.reason if resolution else "")
    (request,) = model.calls
    prompt = request.messages[0]
    assert isinstance(prompt, UserMessage)
    for part in (BASE, OURS, THEIRS, MERGED, "Put a comma", "Capitalise names", "title-cased", "CLI banner"):
        assert part in prompt.text
    assert [t.name for t in request.tools] == ["resolve"]


def test_a_sloppy_reply_with_a_fenced_file_is_accepted_with_its_final_newline() -> None:
    text = "Sure! Here it is:\n\n```python\n" + RESOLVED.rstrip("\n") + "\n```\nHope that helps."
    model = ScriptedModel([{"text": "first a snippet:\n```\nx\n```\n" + text}])
    resolution = _run(LLMResolver(model))
    assert resolution is not None and resolution.text == RESOLVED


def test_markers_or_broken_python_are_sent_back_and_a_fixed_answer_is_taken() -> None:
    model = ScriptedModel([resolve_call(MERGED), {"text": "```python\ndef greet(name:\n```"}, resolve_call(RESOLVED)])
    resolution = _run(LLMResolver(model, attempts=3))
    assert resolution is not None and resolution.text == RESOLVED and "attempt 3" in resolution.reason
    second, third = model.calls[1], model.calls[2]
    feedback = second.messages[-1]
    assert isinstance(feedback, ToolResultMessage) and "conflict markers" in feedback.content
    assert isinstance(third.messages[-1], UserMessage) and "greet.py:1" in third.messages[-1].text


@pytest.mark.parametrize(
    "turns",
    [
        [resolve_call("def greet(:\n")] * 2,
        [{"text": "I cannot resolve this."}] * 2,
        [resolve_call("", delete=True)] * 2,
    ],
)
def test_unusable_answers_leave_the_conflict_to_the_next_rung(turns: list[dict[str, object]]) -> None:
    model = ScriptedModel(turns)
    assert _run(LLMResolver(model)) is None
    model.assert_complete()


def test_deleting_is_allowed_when_one_side_deleted_the_file() -> None:
    model = ScriptedModel([resolve_call("", delete=True)])
    resolution = _run(LLMResolver(model), FileConflict("old.py", BASE, None, THEIRS))
    assert resolution is not None and resolution.text is None


def test_a_model_failure_or_an_oversized_file_gives_none() -> None:
    def fail(request: ModelRequest) -> ModelResponse:
        raise ModelError("provider is down")

    assert _run(LLMResolver(FunctionModel(fail))) is None
    silent = ScriptedModel([])
    assert _run(LLMResolver(silent, max_chars=10)) is None and not silent.calls


def test_calls_are_journaled_and_a_conflict_met_again_is_never_paid_twice(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    model = ScriptedModel([resolve_call(RESOLVED)])
    resolver = LLMResolver(model, store, "run1")
    first, again = _run(resolver), _run(resolver)
    assert first is not None and first == again and len(model.calls) == 1
    (finished,) = store.events("run1", kinds=["model_response"])
    assert isinstance(finished, ModelCallFinished) and finished.agent.startswith("resolver-")
    assert [e.kind for e in store.events("run1", agent=finished.agent)] == ["model_request", "model_response"]
    resumed = ScriptedModel([])
    assert _run(LLMResolver(resumed, store, "run1")) == first and not resumed.calls
    other = FileConflict("greet.py", BASE, OURS, THEIRS.replace("title", "upper"))
    assert asyncio.run(LLMResolver(ScriptedModel([resolve_call(RESOLVED)]), store, "run1").resolve(other, CONTEXT))
    assert len({e.agent for e in store.events("run1", kinds=["model_response"])}) == 2


def test_a_reply_holding_a_secret_is_refused_alike_live_and_resumed(tmp_path: Path) -> None:
    """The log keeps replies redacted: a resolution plait would write with [REDACTED] in it is refused, so a
    resumed integration decides what the live one decided, and no secret is written into a merged file."""
    from plait.events.store import RedactingStore
    from plait.redact import Redactor

    leaky = RESOLVED + "TOKEN = 'ghp_" + "a1B2c3D4" * 5 + "'\n"
    store = RedactingStore(SQLiteEventStore(tmp_path / "events.db"), Redactor())
    live = ScriptedModel([resolve_call(leaky), resolve_call(RESOLVED)])
    first = _run(LLMResolver(live, store, "run1"))
    assert first is not None and first.text == RESOLVED and len(live.calls) == 2
    assert "looks like a secret" in str(live.calls[1].messages[-1])
    resumed = ScriptedModel([])
    assert _run(LLMResolver(resumed, store, "run1")) == first and not resumed.calls
