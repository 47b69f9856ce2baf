"""The LLM rung with scripted models: blocks answered and spliced, what is refused, forced tool use, the journal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.errors import ModelError
from plait.events import ModelCallFinished, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, ModelResponse, ToolResultMessage, UserMessage
from plait.models import FunctionModel, ScriptedModel
from plait.reconcile.llm_resolver import LLMResolver
from plait.reconcile.types import FileConflict, MergeContext, Resolution

HEAD = "import os\n\n\ndef other():\n    return 1\n\n\n"
BASE = HEAD + "def greet(name):\n    return 'hello ' + name\n"
OURS = HEAD + "def greet(name):\n    return 'hello, ' + name\n"
THEIRS = HEAD + "def greet(name):\n    return 'hello ' + name.title()\n"
RESOLVED = HEAD + "def greet(name):\n    return 'hello, ' + name.title()\n"
BLOCK = "    return 'hello, ' + name.title()\n"
CONFLICT = FileConflict("greet.py", BASE, OURS, THEIRS, "")
CONTEXT = MergeContext(
    ours_task="Put a comma after hello",
    theirs_task="Capitalise names",
    ours_intent="added the comma",
    theirs_intent="title-cased the name",
    notes=("greet() is used by the CLI banner", "the docs build is slow"),
)


def hunks(*texts: str, edits: list[dict[str, str]] | None = None) -> dict[str, object]:
    args: dict[str, object] = {"hunks": [{"id": f"H{i}", "text": t} for i, t in enumerate(texts, 1)]}
    if edits:
        args["edits"] = edits
    return {"tool_calls": [{"name": "resolve_conflicts", "arguments": args}]}


def _run(resolver: LLMResolver, conflict: FileConflict = CONFLICT) -> Resolution | None:
    return asyncio.run(resolver.resolve(conflict, CONTEXT))


def test_the_block_is_answered_alone_and_spliced_into_git_merge() -> None:
    model = ScriptedModel([hunks(BLOCK)])
    resolution = _run(LLMResolver(model))
    assert resolution is not None and resolution.text == RESOLVED and "1 conflict block" in resolution.reason
    (request,) = model.calls
    prompt = request.messages[0]
    assert isinstance(prompt, UserMessage)
    assert "<<<<<<< H1 ours\n    return 'hello, ' + name\n||||||| base\n" in prompt.text
    assert "in `def greet`" in prompt.text and "Capitalise names" in prompt.text and "title-cased" in prompt.text
    assert "CLI banner" in prompt.text and "docs build" not in prompt.text  # only notes about this code
    assert "def other" not in prompt.text and BASE not in prompt.text  # not the whole file, nor its sides
    assert [t.name for t in request.tools] == ["resolve_conflicts"]


def test_tool_use_is_forced_on_every_call() -> None:
    model = ScriptedModel([{"text": "Here you go: the comma and the title case."}, hunks(BLOCK)])
    assert _run(LLMResolver(model)) is not None
    assert [r.tool_choice for r in model.calls] == ["resolve_conflicts"] * 2
    assert isinstance(model.calls[1].messages[-1], UserMessage)
    assert "no `resolve_conflicts` call" in model.calls[1].messages[-1].text


def test_a_reply_changing_code_outside_the_blocks_is_refused_and_asked_again() -> None:
    outside = {"path": "greet.py", "find": "import os\n", "replace": "import os\nimport sys\n"}
    retyped = "def greet(name):\n" + BLOCK  # re-types the line above the block
    model = ScriptedModel([hunks(BLOCK, edits=[outside]), hunks(retyped), hunks(BLOCK)])
    resolution = _run(LLMResolver(model, attempts=3))
    assert resolution is not None and resolution.text == RESOLVED and "attempt 3" in resolution.reason
    first, second = model.calls[1].messages[-1], model.calls[2].messages[-1]
    assert isinstance(first, ToolResultMessage) and first.is_error and "outside the conflicts" in first.content
    assert isinstance(second, ToolResultMessage) and "just above the conflict" in second.content


def test_an_edit_in_the_code_shown_around_a_block_is_applied() -> None:
    edit = {"path": "greet.py", "find": "def greet(name):\n", "replace": "def greet(name: str) -> str:\n"}
    model = ScriptedModel([hunks(BLOCK, edits=[edit])])
    resolution = _run(LLMResolver(model))
    assert resolution is not None and resolution.text == RESOLVED.replace(
        "def greet(name):", "def greet(name: str) -> str:"
    )
    assert "1 edit(s)" in resolution.reason


@pytest.mark.parametrize(
    "turns",
    [
        [hunks("    return 'hello, ' + name.title(\n")] * 2,
        [hunks("<<<<<<< ours\n" + BLOCK)] * 2,
        [{"text": "I cannot resolve this."}] * 2,
        [hunks(BLOCK, "x\n")] * 2,
    ],
)
def test_unusable_answers_leave_the_conflict_to_the_next_rung(turns: list[dict[str, object]]) -> None:
    model = ScriptedModel(turns)
    assert _run(LLMResolver(model, attempts=2)) is None
    model.assert_complete()


def test_a_whole_file_answer_is_taken_only_when_it_keeps_everything_outside_the_blocks() -> None:
    whole = {"tool_calls": [{"name": "resolve", "arguments": {"content": RESOLVED}}]}
    sloppy = {"tool_calls": [{"name": "resolve", "arguments": {"content": RESOLVED.replace("return 1", "return 2")}}]}
    model = ScriptedModel([sloppy, whole])
    resolution = _run(LLMResolver(model))
    assert resolution is not None and resolution.text == RESOLVED
    feedback = model.calls[1].messages[-1]
    assert isinstance(feedback, ToolResultMessage) and "changes code outside the conflict blocks" in feedback.content


def test_whole_file_fallback_when_the_hunks_cannot_be_isolated_and_the_reason_says_so() -> None:
    blocks = ["x = 0\n", "\n", "\n", "\n"] * 70
    base = "".join(blocks)
    ours, theirs = base.replace("x = 0", "x = 1"), base.replace("x = 0", "x = 2")
    resolved = base.replace("x = 0", "x = 3")
    model = ScriptedModel([{"tool_calls": [{"name": "resolve", "arguments": {"content": resolved}}]}])
    resolution = _run(LLMResolver(model), FileConflict("many.py", base, ours, theirs))
    assert resolution is not None and resolution.text == resolved
    assert "hunks could not be isolated: 70 conflict hunks" in resolution.reason
    (request,) = model.calls
    prompt = request.messages[0]
    assert request.tool_choice == "resolve" and isinstance(prompt, UserMessage) and ours in prompt.text


def test_a_file_one_side_deleted_is_kept_or_deleted_without_sending_it_whole() -> None:
    gone = FileConflict("greet.py", BASE, None, THEIRS)
    model = ScriptedModel([{"tool_calls": [{"name": "resolve_deleted", "arguments": {"action": "delete"}}]}])
    resolution = _run(LLMResolver(model), gone)
    assert resolution is not None and resolution.text is None and "not carried over" in resolution.reason
    prompt = str(model.calls[0].messages[0])
    assert "ours deleted this file, theirs changed it" in prompt and "+    return 'hello ' + name.title()" in prompt
    assert "return 1" not in prompt and model.calls[0].tool_choice == "resolve_deleted"
    keep = ScriptedModel([{"tool_calls": [{"name": "resolve_deleted", "arguments": {"action": "keep"}}]}])
    kept = _run(LLMResolver(keep), gone)
    assert kept is not None and kept.text == THEIRS


def test_a_model_failure_or_an_oversized_prompt_gives_none() -> None:
    def fail(request: ModelRequest) -> ModelResponse:
        raise ModelError("provider is down")

    assert _run(LLMResolver(FunctionModel(fail))) is None
    silent = ScriptedModel([])
    assert _run(LLMResolver(silent, max_chars=10)) is None and not silent.calls


def test_calls_are_journaled_and_a_conflict_met_again_is_never_paid_twice(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    model = ScriptedModel([hunks(BLOCK)])
    resolver = LLMResolver(model, RunLog(store, "run1"))
    first, again = _run(resolver), _run(resolver)
    assert first is not None and first == again and len(model.calls) == 1
    (finished,) = store.events("run1", kinds=["model_response"])
    assert isinstance(finished, ModelCallFinished) and finished.agent.startswith("resolver-")
    assert [e.kind for e in store.events("run1", agent=finished.agent)] == ["model_request", "model_response"]
    resumed = ScriptedModel([])
    assert _run(LLMResolver(resumed, RunLog(store, "run1"))) == first and not resumed.calls
    other = FileConflict("greet.py", BASE, OURS, THEIRS.replace("title", "upper"))
    assert asyncio.run(LLMResolver(ScriptedModel([hunks(BLOCK)]), RunLog(store, "run1")).resolve(other, CONTEXT))
    assert len({e.agent for e in store.events("run1", kinds=["model_response"])}) == 2


def test_a_reply_holding_a_secret_is_refused_alike_live_and_resumed(tmp_path: Path) -> None:
    """The log keeps replies redacted: a resolution plait would write with [REDACTED] in it is refused, so a
    resumed integration decides what the live one decided, and no secret is written into a merged file."""
    from plait.events.store import RedactingStore
    from plait.redact import Redactor

    leaky = BLOCK + "    TOKEN = 'ghp_" + "a1B2c3D4" * 5 + "'\n"
    store = RedactingStore(SQLiteEventStore(tmp_path / "events.db"), Redactor())
    live = ScriptedModel([hunks(leaky), hunks(BLOCK)])
    first = _run(LLMResolver(live, RunLog(store, "run1")))
    assert first is not None and first.text == RESOLVED and len(live.calls) == 2
    assert "looks like a secret" in str(live.calls[1].messages[-1])
    resumed = ScriptedModel([])
    assert _run(LLMResolver(resumed, RunLog(store, "run1"))) == first and not resumed.calls


def test_the_run_board_notes_about_the_conflicted_file_reach_the_prompt(tmp_path: Path) -> None:
    """In a run, the notes agents posted on the board about the file (or its folder) explain the conflict; plait's
    own notices and notes about other files do not reach the prompt."""
    from plait.events.types import NotePosted

    store = SQLiteEventStore(tmp_path / "events.db")
    posted = [
        ("t1", "api", "callers expect punctuation after the greeting", ["greet.py"]),
        ("t3", "docs", "the docs build uses sphinx 7", ["docs/conf.py"]),
        ("radar", "conflict", "t1 and t2 both edit greet.py", ["greet.py"]),
    ]
    for agent, topic, text, paths in posted:
        store.append(NotePosted(run_id="run1", agent=agent, topic=topic, text=text, paths=paths))
    model = ScriptedModel([hunks(BLOCK)])
    assert _run(LLMResolver(model, RunLog(store, "run1"))) is not None
    prompt = model.calls[0].messages[0]
    assert isinstance(prompt, UserMessage)
    assert "[api] from t1 about greet.py: callers expect punctuation after the greeting" in prompt.text
    assert "sphinx" not in prompt.text and "both edit" not in prompt.text


def test_a_long_side_close_to_the_base_is_shown_as_its_diff_and_a_def_in_a_document_is_not_said_to_have_moved() -> None:
    """A document one side cut down to a line while the other fixed two lines in it (docs moved elsewhere): the
    fixed side goes as its diff against the base, and the example `def` in the removed text is not "moved"."""
    lines = [f"Paragraph {i} of the guide, explaining one more thing.\n" for i in range(40)]
    lines[20:21] = [".. code-block:: python\n", "\n", "    def cli():\n", "        pass\n"]
    base = "Guide\n=====\n\n" + "".join(lines)
    ours = "Guide\n=====\n\nMoved to :doc:`entry-points`.\n"
    theirs = base.replace("Paragraph 7 of", "Paragraph seven of").replace("Paragraph 30 of", "Paragraph 30, of")
    model = ScriptedModel([hunks("Moved to :doc:`entry-points`.\n")])
    resolution = _run(LLMResolver(model), FileConflict("docs/guide.rst", base, ours, theirs))
    assert resolution is not None and resolution.text == ours
    prompt = str(model.calls[0].messages[0])
    assert "(the base's 43 lines above, with these changes; a diff, not the text)" in prompt
    assert "-Paragraph 7 of the guide" in prompt and "+Paragraph seven of the guide" in prompt
    assert prompt.count("Paragraph 12 of the guide") == 1  # the base's lines, once
    assert "removed `cli`" not in prompt


def test_a_method_of_a_class_one_side_removed_is_not_placed_in_the_class_the_block_starts_in() -> None:
    b = "class B:\n    def __init__(self):\n        self.b = 0\n\n    def check(self):\n        return {}\n"
    a = "\n\nclass A:\n    def __init__(self):\n        self.a = {}\n"
    base, ours, theirs = b.format(1) + a.format(1), b.format(2), b.format(1) + a.format(10)
    model = ScriptedModel([hunks("        return 2\n")])
    resolution = _run(LLMResolver(model), FileConflict("ab.py", base, ours, theirs))
    assert resolution is not None and resolution.text == ours
    prompt = str(model.calls[0].messages[0])
    assert "ours removed `__init__` from H1 while theirs changed it; ours has no `__init__` in class `A`" in prompt
    assert "now at line" not in prompt


def test_a_class_in_a_docstring_example_of_removed_code_is_not_said_to_have_moved() -> None:
    shown = "class Shown:\n    def check(self):\n        return {}\n"
    example = '    """Example::\n\n        class UserSchema(Schema):\n            name = 1\n    """\n'
    formatted = "\n\nclass Formatted:\n" + example + "\n    def render(self):\n        return {}\n"
    base, ours = shown.format(1) + formatted.format(1), shown.format(2)
    theirs = shown.format(1) + formatted.format(10)
    model = ScriptedModel([hunks("        return 2\n")])
    resolution = _run(LLMResolver(model), FileConflict("f.py", base, ours, theirs))
    assert resolution is not None and resolution.text == ours
    prompt = str(model.calls[0].messages[0])
    assert "ours removed `Formatted` from H1 while theirs changed it" in prompt
    assert "removed `UserSchema`" not in prompt
