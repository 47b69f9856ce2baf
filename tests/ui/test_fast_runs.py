"""`plait runs`' table read from the log's rows without the event models: the same rows as the runs' summaries,
and the full read whenever a row is not what it expects."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_support import git
from synthetic_run import RUN_ID, append_run, parallel_run

from plait.cli import main
from plait.events.store import SQLiteEventStore
from plait.events.types import (
    Event,
    ModelCallFinished,
    ModelCallStarted,
    RunFinished,
    RunStarted,
)
from plait.log_upgrade import SCHEMA_VERSION
from plait.messages import ModelResponse, Usage
from plait.ui._fast_runs import run_rows
from plait.ui.summary import summarize

LOCAL = "openai-compatible:qwen@http://127.0.0.1:8080/v1"


def _call(run_id: str, agent: str, model: str, answered_by: str, cost: float) -> list[Event]:
    usage = Usage(input_tokens=1000, output_tokens=50, cached_tokens=200)
    response = ModelResponse(text="ok", usage=usage, model=answered_by)
    return [
        ModelCallStarted(run_id=run_id, agent=agent, call=1, req_hash="h", model=model, messages=1),
        ModelCallFinished(run_id=run_id, agent=agent, call=1, req_hash="h", response=response, cost_usd=cost),
    ]


def _started(run_id: str, model: str, **settings: object) -> RunStarted:
    return RunStarted(
        run_id=run_id, task="Fix it\nand test it", repo="/r", base_commit="b", base_ref="main", model=model,
        settings=settings,
    )  # fmt: skip


def _resumed_run() -> list[Event]:
    """An unpriced model, a dated and a re-routed priced one, a call of no agent; interrupted, then resumed."""
    run = "20260102-000000-cafe"
    return [
        _started(run, LOCAL),
        *_call(run, "a", LOCAL, "", 0.0),
        *_call(run, "b", "anthropic:claude-haiku-4-5-20251001", "x", 0.0021),
        *_call(run, "", "", "openai-chat:gpt-4o", 0.5),
        RunFinished(run_id=run, status="interrupted", reason="Ctrl-C"),
        _started(run, LOCAL, max_steps=3),
        *_call(run, "a", "", "", 0.0),
    ]


def _log(project: Path, *runs: list[Event]) -> Path:
    path = project / ".git" / "plait" / "events.db"
    store = SQLiteEventStore(path)
    for events in runs:
        append_run(store, events)
    store.close()
    return path


def _shown(path: Path) -> list[tuple[object, ...]]:
    store = SQLiteEventStore(path)
    summaries = [summarize(run_id, store.events(run_id)) for run_id in store.run_ids()]
    store.close()
    return [(s.run_id, s.task, s.model, s.status, s.model_calls, s.cost_text) for s in summaries]


def _rows(path: Path) -> list[tuple[object, ...]] | None:
    rows = run_rows(path)
    return None if rows is None else [(r.run_id, r.task, r.model, r.status, r.model_calls, r.cost_text) for r in rows]


def test_the_rows_are_what_the_summaries_say(project: Path) -> None:
    path = _log(project, parallel_run(base=git(project, "rev-parse", "HEAD")), _resumed_run())
    assert _rows(path) == _shown(path)
    assert [row[3:] for row in _shown(path)] == [("done", 20, "$0.2411"), ("running", 4, "$0.5021 + unpriced")]


def test_the_rows_of_a_real_run_are_what_its_summary_says(demo_run: tuple[Path, str]) -> None:
    path = demo_run[0] / ".git" / "plait" / "events.db"
    assert _rows(path) == _shown(path)


@pytest.mark.parametrize(
    "change",
    [
        f"UPDATE events SET payload = json_set(payload, '$.v', {SCHEMA_VERSION + 1}) WHERE kind = 'note'",
        "UPDATE events SET payload = json_set(payload, '$.kind', 'later') WHERE kind = 'note'",
        "UPDATE events SET payload = json_set(payload, '$.cost_usd', '0.5') WHERE kind = 'model_response'",
        "UPDATE events SET payload = json_set(payload, '$.status', 'paused') WHERE kind = 'run_finished'",
        "UPDATE events SET payload = json_set(payload, '$.settings.prices', json('{\"x:y\": {}}'))"
        " WHERE kind = 'run_started'",
        "UPDATE events SET payload = '{' WHERE kind = 'note'",
    ],
    ids=["newer schema", "unknown kind", "cost as text", "unknown status", "own prices", "not JSON"],
)
def test_a_row_it_does_not_read_as_expected_is_left_to_the_full_read(project: Path, change: str) -> None:
    path = _log(project, parallel_run(base=git(project, "rev-parse", "HEAD")))
    db = sqlite3.connect(path)
    db.execute(change)
    db.commit()
    db.close()
    assert run_rows(path) is None


@pytest.mark.parametrize("settings", [False, True], ids=["nothing set", "a setting in the environment"])
def test_plait_runs_shows_the_same_table_either_way(
    project: Path, settings: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a setting set, the events are read the full way (the settings' models are imported anyway)."""
    _log(project, parallel_run(base=git(project, "rev-parse", "HEAD")), _resumed_run())
    monkeypatch.chdir(project)
    if settings:
        monkeypatch.setenv("PLAIT_MAX_STEPS", "60")
    assert main(["runs"]) == 0
    shown = capsys.readouterr().out.splitlines()
    rows = [line.split()[:5] for line in shown[1:] if line.startswith("2026")]
    # the model's column is cut to the terminal's width, which differs from one machine to another
    assert [[run, status, calls, cost] for run, status, _, calls, cost in rows] == [
        [RUN_ID, "done", "20", "$0.2411"],
        ["20260102-000000-cafe", "unfinished", "4", "$0.5021"],
    ]
    models = ["anthropic:claude-sonnet-4-5", "openai-compatible:qwen"]
    assert all(full.startswith(cell.rstrip("…")) for (_, _, cell, _, _), full in zip(rows, models, strict=True))
    assert "Fix it" in shown[-1] and "and test it" not in "".join(shown)
