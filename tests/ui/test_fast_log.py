"""`plait log` read from the log's rows without the event models: the same lines as the full read, for real and
recorded runs, and the full read whenever a row is not what the reader expects."""

from __future__ import annotations

import shutil
import sqlite3
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from cli_support import git
from pydantic import BaseModel
from pydantic_core import PydanticUndefined
from synthetic_run import RUN_ID, append_run, parallel_run

from plait import messages as model_types
from plait import plan_model
from plait.cli import main
from plait.errors import StateError
from plait.events import types as event_types
from plait.events.store import SQLiteEventStore
from plait.events.types import (
    AgentStopped,
    Event,
    ExpertStarted,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallStarted,
    NotePosted,
    PolicyDecided,
    PromptGiven,
    QuestionAnswered,
    QuestionAsked,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
    UserSteered,
)
from plait.log_upgrade import SCHEMA_VERSION
from plait.messages import ModelResponse, ToolCall, Usage
from plait.ui import _view
from plait.ui._fast_events import FIELDS, MODELS, REQUIRED
from plait.ui._fast_log import read_log

FAILED = "20260103-000000-dead"
SECRET = "Zq8mXv2LpR7tKw4NbY6cJd3H"


def _failed_run() -> list[Event]:
    """A run that failed, was resumed and failed again: retries, a model error, a malformed tool call, an error
    result, an expert, a question, a steer, a denied command, a note, and a secret in the task."""
    r = {"run_id": FAILED, "agent": "fix"}
    started = {"task": f"Fix it with key {SECRET}", "repo": "/r", "base_commit": "c" * 40, "base_ref": "main"}
    reply = ModelResponse(
        text="Reading.\nThen fixing.",
        tool_calls=(ToolCall(id="1", name="read_file", arguments=None, raw_arguments='{"path": '),),
        usage=Usage(input_tokens=1234, output_tokens=56, cached_tokens=1000),
        model="openai:gpt-5",
    )
    return [
        RunStarted(run_id=FAILED, ts=1.0, model="openai:gpt-5", settings={"max_steps": 3}, **started),
        TaskStarted(**r, ts=1.5, title="fix", branch="plait/x/fix", worktree="/w", base_commit="c" * 40),
        PromptGiven(**r, ts=1.6, system="s", user="Fix it\nplease"),
        ModelCallStarted(**r, ts=1.7, call=1, req_hash="h", model="openai:gpt-5", messages=1),
        ModelCallRetried(**r, ts=2.0, call=1, attempt=1, wait_s=1.5, reason="HTTP 429"),
        ModelCallFinished(**r, ts=3.0, call=1, req_hash="h", response=reply, cost_usd=0.0123, duration_s=1.25),
        ToolCalled(**r, ts=3.1, call=reply.tool_calls[0]),
        ToolReturned(**r, ts=3.2, call_id="1", name="read_file", output="error: bad JSON\nmore", is_error=True),
        PolicyDecided(**r, ts=3.3, action="command", subject="curl x", verdict="deny", rule="net"),
        ModelCallFailed(**r, ts=4.0, call=2, error="the server closed the connection"),
        AgentStopped(**r, ts=4.1, reason="model_error", steps=1, usage=reply.usage, cost_usd=0.0123),
        TaskFinished(**r, ts=4.2, status="failed", reason="model error"),
        RunFinished(run_id=FAILED, ts=4.3, status="interrupted", reason="stopped"),
        RunStarted(run_id=FAILED, ts=10.0, model="openai:gpt-5", **started),
        ExpertStarted(run_id=FAILED, agent="expert:db", ts=10.5, name="db", area=["db/*"]),
        QuestionAsked(run_id=FAILED, agent="expert:db", ts=11.0, asker="fix", number=1, question="Where?"),
        QuestionAnswered(run_id=FAILED, agent="expert:db", ts=12.0, asker="fix", number=1, answer="Here.", reads=2),
        UserSteered(**r, ts=12.5, action="say", text="hurry"),
        NotePosted(**r, ts=13.0, topic="api", text="renamed load() \x1b[2J", paths=["db/x.py"]),
        RunFinished(run_id=FAILED, ts=14.0, status="failed", reason="fix failed:\nmodel error"),
    ]


def _code(annotation: Any) -> Any:
    """A model field's type as `_fast_events` writes it."""
    simple = {str: "str", int: "int", float: "float", bool: "bool"}
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation in simple:
        return simple[annotation]
    if origin is Literal:
        return args
    if origin is list and args == (str,):
        return "list[str]"
    if origin is dict:
        return "dict"
    if origin in (types.UnionType, typing.Union) and args[1:] == (type(None),):
        return ("optional", _code(args[0]))
    if origin is tuple and args[1:] == (Ellipsis,):
        return ("tuple", _code(args[0]))
    if origin is list:
        return ("list", _code(args[0]))
    assert isinstance(annotation, type) and issubclass(annotation, BaseModel), annotation
    return annotation.__name__


def _fields(model: type[BaseModel]) -> dict[str, tuple[Any, Any]]:
    fields = {}
    for name, info in model.model_fields.items():
        default = REQUIRED if info.default is PydanticUndefined else info.default
        if isinstance(default, BaseModel):  # read from its JSON, as a model's default is written there
            assert default == type(default).model_validate({})
            default = {}
        fields[name] = (_code(info.annotation), default)
    return fields


def test_the_fields_it_reads_are_the_models() -> None:
    kinds = get_args(get_args(Event)[0])
    assert {m.model_fields["kind"].default: _fields(m) for m in kinds} == FIELDS
    held = {name: getattr(model_types, name, None) or getattr(plan_model, name, None) for name in MODELS}
    held["OwedTests"] = event_types.OwedTests
    assert {name: _fields(model) for name, model in held.items()} == MODELS


def _store(path: Path, *runs: list[Event]) -> Path:
    store = SQLiteEventStore(path)
    for run in runs:
        append_run(store, run)
    store.close()
    return path


def _both(repo: Path, ref: str, agent: str | None, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert read_log(repo, ref, agent)
    fast = capsys.readouterr().out
    _view.run_log(ref, repo, as_json=False, follow=False, agent=agent, interval=0.25)
    return fast, capsys.readouterr().out


@pytest.mark.parametrize(
    ("ref", "agent"),
    [(RUN_ID, None), (RUN_ID, "cli"), (RUN_ID, "planner"), (FAILED, None), (FAILED, "expert:db"), ("last", "fix")],
)
def test_the_lines_are_the_full_reads(
    project: Path, ref: str, agent: str | None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with a rejected plan, a failed gate and an ejected task; a failed, resumed run; a secret of the
    environment in the task is redacted either way."""
    monkeypatch.setenv("MY_SERVICE_API_KEY", SECRET)
    _store(project / ".git/plait/events.db", parallel_run(base=git(project, "rev-parse", "HEAD")), _failed_run())
    fast, full = _both(project, ref, agent, capsys)
    assert fast == full
    assert len(fast.splitlines()) >= 3 and SECRET not in fast


@pytest.mark.parametrize("secret", [True, False], ids=["a secret to redact", "nothing to redact"])
def test_control_characters_are_shown_as_marks_either_way(
    project: Path, secret: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if secret:
        monkeypatch.setenv("MY_SERVICE_API_KEY", SECRET)
    _store(project / ".git/plait/events.db", _failed_run())
    fast, full = _both(project, "last", None, capsys)
    assert fast == full
    assert "\x1b" not in fast and "renamed load() ␛[2J" in fast
    assert (SECRET in fast) is not secret


@pytest.mark.parametrize("agent", [None, "csv-export", "planner"])
def test_the_lines_of_a_real_run_are_the_full_reads(
    demo_run: tuple[Path, str], agent: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    fast, full = _both(demo_run[0], demo_run[1], agent, capsys)
    assert fast == full and len(fast.splitlines()) > 10


def test_an_agent_the_run_does_not_have_is_the_same_usage_error(project: Path) -> None:
    _store(project / ".git/plait/events.db", _failed_run())
    with pytest.raises(Exception, match="has no agent 'nope': its agents are expert:db, fix") as fast:
        read_log(project, "last", "nope")
    with pytest.raises(type(fast.value), match=str(fast.value)):
        _view.run_log("last", project, as_json=False, follow=False, agent="nope", interval=0.25)


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        (f"json_set(payload, '$.v', {SCHEMA_VERSION + 1})", True),
        ("json_set(payload, '$.kind', 'later')", True),
        ("json_set(payload, '$.ts', '3.5')", False),
        ("json_set(payload, '$.call', 2.0)", False),
        ("json_set(payload, '$.extra', 1)", True),
        ("json_remove(payload, '$.req_hash')", True),
        ("json_set(payload, '$.response.usage.input_tokens', '9')", False),
        ("'{'", True),
    ],
    ids=["newer schema", "unknown kind", "time as text", "float call", "extra field", "missing", "deep", "not JSON"],
)
def test_a_row_it_does_not_read_as_expected_is_left_to_the_full_read(
    project: Path, change: str, refused: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is printed, and `plait log` then says what the full read says of the row (or shows it)."""
    path = _store(project / ".git/plait/events.db", _failed_run())
    db = sqlite3.connect(path)
    db.execute(f"UPDATE events SET payload = {change} WHERE kind = 'model_response'")
    db.commit()
    db.close()
    assert not read_log(project, "last", None)
    assert capsys.readouterr().out == ""
    monkeypatch.chdir(project)
    code = main(["log", "last"])
    said = capsys.readouterr()
    if refused:  # plait log says what the full read says of the row
        with pytest.raises(StateError) as full:
            _view.run_log("last", project, as_json=False, follow=False, agent=None, interval=0.25)
        assert code != 0 and str(full.value) in said.err
    else:  # converted as pydantic converts it
        _view.run_log("last", project, as_json=False, follow=False, agent=None, interval=0.25)
        assert code == 0 and said.out == capsys.readouterr().out


def test_a_repository_with_no_log_is_left_to_the_full_read(project: Path) -> None:
    """The full read says that there are no runs yet."""
    shutil.rmtree(project / ".git/plait", ignore_errors=True)
    with pytest.raises(Exception, match="no plait runs"):
        _view.run_log("last", project, as_json=False, follow=False, agent=None, interval=0.25)
    assert not read_log(project, "last", None)
