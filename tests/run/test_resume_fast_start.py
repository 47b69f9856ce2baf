"""`plait resume RUN` with plain options starts without typer and without the merge machinery, which a resumed run
needs only at its first merge, and builds the event models of the kinds it reads only; it prints and exits as the
typer command does (every command line here runs both ways and the two are compared)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from plait.cli import main
from plait.events.store import SQLiteEventStore
from plait.events.types import RunFinished, RunKind, RunStarted
from plait.workspace import Repo

LATER = (
    "typer",
    "click",
    "plait.cli.cmd_run",
    "plait.reconcile.queue",
    "plait.reconcile.ladder",
    "plait.reconcile.llm_resolver",
    "plait.reconcile.structured",
    "plait.plan.planner",
    "plait.plan.triage",
    "plait.plan.load",
    "plait.plan.overlap",
    "plait.run.session",
    "plait.run.investigate",
    "plait.ui._run_report",
    "plait.ui.live",
    "rich.table",
    "textual",
    "openai",
    "anthropic",
    "mcp",
)
"""What a resumed run's first model call needs none of: the command line's parser, the merge queue and ladder
(made at the first merge), planning (a resumed run has its plan), the other kinds of run, the end of a run's report
and the live view, the SDKs."""

_PROBE = """
import json, sys
from typing import get_args
from plait.cli import main
from plait.events.types import Event
code = main(sys.argv[1:])
built = [m.model_fields["kind"].default for m in get_args(get_args(Event)[0]) if m.__pydantic_complete__]
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules), "built": sorted(built)}))
"""

HERE = "<project>"


def _log(repo: Repo, *, finished: bool = True, kind: str = "") -> None:
    store = SQLiteEventStore(repo.common_dir / "plait" / "events.db")
    head = repo.head()
    store.append(RunStarted(run_id="r1", task="add a test", repo=".", model="m", base_commit=head, base_ref="main"))
    if kind == "session":
        store.append(RunKind(run_id="r1", decision="this run is a session", what="session"))
    if finished:
        store.append(RunFinished(run_id="r1", status="done", reason="all done", branch="main", commit=head))
    store.close()


def test_a_resume_imports_neither_typer_nor_the_merge_machinery(repo: Repo) -> None:
    _log(repo)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, "resume", "last"],
        cwd=repo.root,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stderr
    assert "plait.run.orchestrate" in report["modules"]  # what the run goes on with is there
    loaded = [m for m in report["modules"] if any(m == f or m.startswith(f + ".") for f in LATER)]
    assert loaded == []
    assert report["built"] == ["run_finished", "run_started"]  # the event models of the kinds it read, no other


@pytest.mark.parametrize(
    "argv",
    [
        ["resume", "last"],
        ["resume", "r1", "--json", "-q"],
        ["resume", "--quiet", "last", "--repo", HERE],
        ["-C", HERE, "resume", "last"],
        ["resume", "nosuch"],
        ["resume"],
        ["resume", "last", "extra"],
        ["resume", "last", "--help"],
        ["resume", "-x", "last"],
    ],
    ids=" ".join,
)
def test_a_resume_started_without_typer_says_what_typer_says(
    repo: Repo, argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _log(repo)
    monkeypatch.chdir(repo.root)
    shown = []
    for fast in (True, False):
        code = main([a.replace(HERE, str(repo.root)) for a in argv], fast=fast)
        said = capsys.readouterr()
        shown.append((code, said.out, said.err))
    assert shown[0] == shown[1]


@pytest.mark.parametrize("kind", ["session", ""])
def test_a_run_that_is_not_a_change_or_has_not_ended_is_told_apart_from_the_state(repo: Repo, kind: str) -> None:
    from plait.events.runlog import RunLog
    from plait.run.state import load_state

    _log(repo, finished=False, kind=kind)
    store = SQLiteEventStore(repo.common_dir / "plait" / "events.db")
    state = load_state(RunLog(store, "r1"))
    store.close()
    assert state.kind == kind and state.unfinished
