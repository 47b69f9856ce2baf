"""The event models are built when a process first makes or reads an event of their kind, not at import: a resume reads
a few of the kinds. A kind read for the first time still checks its rows as the union always did: a malformed row
is one line naming it, in the same words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from plait.errors import StateError
from plait.events.store import SQLiteEventStore
from plait.events.types import EventAdapter, GateChecked, RunStarted

_PROBE = """
import json, sys
from plait.errors import StateError
from plait.events.store import SQLiteEventStore
from typing import get_args
from plait.events.types import Event
store = SQLiteEventStore(sys.argv[1])
try:
    store.events("r1", kinds=["run_started"])
    said = ""
    store.events("r1")
except StateError as exc:
    said = str(exc)
models = get_args(get_args(Event)[0])
built = sorted(model.model_fields["kind"].default for model in models if model.__pydantic_complete__)
print(json.dumps({"built": built, "said": said}))
"""


def _log(path: Path) -> None:
    store = SQLiteEventStore(path)
    store.append(RunStarted(run_id="r1", task="t", repo=".", base_commit="c", base_ref="main", model="m"))
    store.append(GateChecked(run_id="r1", commit="c", stage="parse", passed=True))
    store.close()
    bad = GateChecked(run_id="r1", commit="c", stage="parse", passed=True).model_dump(mode="json") | {"passed": []}
    raw = SQLiteEventStore(path)
    raw._db.execute(  # a row no plait writes: the store only appends valid events
        "INSERT INTO events (run_id, agent, kind, ts, payload) VALUES ('r1', '', 'gate', 0, ?)", (json.dumps(bad),)
    )
    raw.close()


def test_a_process_builds_the_models_of_the_kinds_it_reads_only(tmp_path: Path) -> None:
    _log(tmp_path / "events.db")
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "events.db")], capture_output=True, text=True, check=True
    )
    report = json.loads(proc.stdout)
    assert report["built"] == ["gate", "run_started"]  # of the 39 kinds, those it read
    assert report["said"] == (
        f"event 3 in {tmp_path / 'events.db'} is malformed at gate.passed: Input should be a valid boolean"
    )


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "gate", "run_id": "r1", "commit": "c", "stage": "lint", "passed": True},
        {"kind": "no such kind", "run_id": "r1"},
        {"run_id": "r1"},
        {"kind": ["gate"], "run_id": "r1"},
    ],
)
def test_an_event_that_fits_no_model_is_refused_in_the_unions_words(tmp_path: Path, data: dict[str, object]) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    with pytest.raises(StateError) as raised:
        store.decode(json.dumps(data))
    with pytest.raises(ValidationError) as union:  # the union's own check, which knows every kind
        EventAdapter.validate_python(data)
    assert str(raised.value) == f"an event is malformed: {union.value.errors()[0]['msg']}"
    store.close()
