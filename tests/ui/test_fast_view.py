"""`plait status`, `cost` and `show` read from the log's rows without the event models print what the full read
prints, byte for byte, for recorded and real runs; whatever the reader does not read is left to the full read."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import get_args

import pytest
from cli_support import git
from synthetic_run import RUN_ID, append_run, parallel_run
from test_fast_log import FAILED, SECRET, _failed_run

from plait.events.store import SQLiteEventStore
from plait.events.types import AttemptPlaced, Decided, Event, RunStarted, UserSteered
from plait.ui import _view
from plait.ui._fast_view import show_cost, show_status, show_transcript
from plait.ui._reduce import _DECIDED
from plait.ui._runs import show_run
from plait.ui._state import EXPERT_PREFIX

PRICED = "20260104-000000-cafe"


def _priced_run() -> list[Event]:
    """A run that logged prices of its own, was placed on a node, and paused one agent."""
    failed = _failed_run()
    settings = {"prices": {"openai:gpt-5": {"input": 2.0, "output": 20.0, "cached_input": 0.5}}}
    started = failed[0]
    assert isinstance(started, RunStarted)
    changed = [started.model_copy(update={"settings": settings})] + failed[1:12]
    events = [e.model_copy(update={"run_id": PRICED}) for e in changed]
    where = {"decision": "placed", "node": "n" * 40, "host": "worker-1", "attempt": 1}
    events.insert(2, AttemptPlaced(run_id=PRICED, agent="fix", ts=1.55, **where))
    events.insert(3, UserSteered(run_id=PRICED, agent="fix", ts=1.56, action="pause"))
    return events


def _store(project: Path) -> None:
    store = SQLiteEventStore(project / ".git/plait/events.db")
    for run in (parallel_run(base=git(project, "rev-parse", "HEAD")), _failed_run(), _priced_run()):
        append_run(store, run)
    store.close()


Show = Callable[[Path, str], bool]
Full = Callable[[Path, str], None]
COMMANDS: dict[str, tuple[Show, Full]] = {
    "status --json": (
        lambda repo, ref: show_status(repo, ref, as_json=True),
        lambda repo, ref: _view.run_status(ref, repo, as_json=True, plain=False, follow=False, interval=1),
    ),
    "status --plain": (
        lambda repo, ref: show_status(repo, ref, as_json=False),
        lambda repo, ref: _view.run_status(ref, repo, as_json=False, plain=True, follow=False, interval=1),
    ),
    "cost": (
        lambda repo, ref: show_cost(repo, ref, as_json=False),
        lambda repo, ref: _view.run_cost(ref, repo, as_json=False),
    ),
    "cost --json": (
        lambda repo, ref: show_cost(repo, ref, as_json=True),
        lambda repo, ref: _view.run_cost(ref, repo, as_json=True),
    ),
    "show --no-pager": (
        lambda repo, ref: show_transcript(repo, ref, None, full=False, no_pager=True),
        lambda repo, ref: show_run(ref, None, repo, full=False, no_pager=True, as_json=False),
    ),
    "show --full --no-pager": (
        lambda repo, ref: show_transcript(repo, ref, None, full=True, no_pager=True),
        lambda repo, ref: show_run(ref, None, repo, full=True, no_pager=True, as_json=False),
    ),
}


def _both(command: str, repo: Path, ref: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    fast, full = COMMANDS[command]
    assert fast(repo, ref)
    shown = capsys.readouterr().out
    full(repo, ref)
    return shown, capsys.readouterr().out


@pytest.mark.parametrize("ref", [RUN_ID, FAILED, PRICED])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_what_is_printed_is_the_full_reads(
    project: Path, command: str, ref: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with a rejected plan, merges, a failed gate and an ejected task; a failed, resumed run with an expert
    and a secret of the environment in its task; a run with prices of its own, placed on a node, an agent paused."""
    monkeypatch.setenv("MY_SERVICE_API_KEY", SECRET)
    _store(project)
    fast, full = _both(command, project, ref, capsys)
    assert fast == full
    assert len(fast.splitlines()) >= 5 and SECRET not in fast


@pytest.mark.parametrize("task", ["fix", "expert:db"])
def test_the_transcript_of_one_agent_is_the_full_reads(
    project: Path, task: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _store(project)
    assert show_transcript(project, FAILED, task, full=False, no_pager=True)
    fast = capsys.readouterr().out
    show_run(FAILED, task, project, full=False, no_pager=True, as_json=False)
    assert fast == capsys.readouterr().out and len(fast.splitlines()) >= 3


def test_an_agent_the_run_does_not_have_is_the_same_usage_error(project: Path) -> None:
    _store(project)
    with pytest.raises(Exception, match="has no agent 'nope': its agents are expert:db, fix") as fast:
        show_transcript(project, FAILED, "nope", full=False, no_pager=True)
    with pytest.raises(type(fast.value), match=str(fast.value)):
        show_run(FAILED, "nope", project, full=False, no_pager=True, as_json=False)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_what_is_printed_of_a_real_run_is_the_full_reads(
    demo_run: tuple[Path, str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fast, full = _both(command, demo_run[0], demo_run[1], capsys)
    assert fast == full and len(fast.splitlines()) > 10


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_row_it_does_not_read_is_left_to_the_full_read(
    project: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing is printed: the caller reads the log the full way."""
    _store(project)
    db = sqlite3.connect(project / ".git/plait/events.db")
    db.execute("UPDATE events SET payload = json_set(payload, '$.extra', 1) WHERE kind = 'model_response'")
    db.commit()
    db.close()
    assert not COMMANDS[command][0](project, RUN_ID)
    assert capsys.readouterr().out == ""


def test_the_fold_knows_an_expert_as_the_events_name_it() -> None:
    from plait.events.types import EXPERT_PREFIX as NAMED

    assert EXPERT_PREFIX == NAMED


def test_the_fold_knows_the_decisions_by_their_kinds() -> None:
    """The fold reads a decision (a lease, the run's kind...) by its kind: every kind whose event is a `Decided`."""
    decided = {m.model_fields["kind"].default for m in get_args(get_args(Event)[0]) if issubclass(m, Decided)}
    assert decided == _DECIDED
