"""The read-only commands started without typer print what typer's commands print, exit as they exit, and leave
to typer whatever they do not read: every command line here runs both ways and the two are compared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import git
from synthetic_run import FAKE_KEY, RUN_ID, append_run, parallel_run

from plait.cli import main
from plait.events.store import SQLiteEventStore
from plait.settings import Settings
from plait.ui._reading import SETTING_NAMES

HERE = "<project>"
"""Stands for the project's path in a command line."""

COMMAND_LINES = [
    [],
    ["--help"],
    ["-h"],
    ["--version"],
    ["runs"],
    ["runs", "--json"],
    ["runs", "--repo", HERE],
    ["runs", f"--repo={HERE}", "--json", "--json"],
    ["runs", "-C", HERE],
    ["-C", HERE, "runs"],
    ["-C", "/no/such/dir", "runs"],
    ["-C", HERE, "--version"],
    ["runs", "extra"],
    ["runs", "--help"],
    ["runs", "--json=yes"],
    ["runs", "--repo"],
    ["runs", "--", "--json"],
    ["status", "--json"],
    ["status", "--plain"],
    ["status", RUN_ID[:8], "--json", "--follow"],
    ["status", "--interval", "0.01", "--plain"],
    ["status", "--interval", "soon", "--plain"],
    ["status", "--plain", "--interval=0.05"],
    ["status", "-fC", HERE],
    ["status", "last", "last"],
    ["show", "last", "--no-pager"],
    ["show", "--no-pager", "last", "money", "--full"],
    ["show", "last", "--json"],
    ["show", "last", "nobody", "--no-pager"],
    ["show", "nosuch", "--no-pager"],
    ["show"],
    ["log", RUN_ID],
    ["log", "last", "--json"],
    ["log", "last", "--agent", "ledger"],
    ["log", "last", "--agent=nobody"],
    ["log", "last", "-f", "--interval", "0.05", "--agent", "cli"],
    ["log"],
    ["cost", "last"],
    ["cost", "last", "--json", "-C", HERE],
    ["cost"],
    ["cost", "-x", "last"],
]


def _run(argv: list[str], *, fast: bool, project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    os.chdir(project)
    code = main([str(project) if a == HERE else a.replace(HERE, str(project)) for a in argv], fast=fast)
    shown = capsys.readouterr()
    return code, shown.out, shown.err


@pytest.fixture
def recorded(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    append_run(store, parallel_run(base=git(project, "rev-parse", "HEAD")))
    store.close()
    monkeypatch.chdir(project)
    return project


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: " ".join(argv) or "(none)")
def test_the_fast_start_prints_what_typer_prints(
    recorded: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    fast = _run(argv, fast=True, project=recorded, capsys=capsys)
    typer = _run(argv, fast=False, project=recorded, capsys=capsys)
    assert fast == typer


@pytest.mark.parametrize(
    ("files", "env", "argv"),
    [
        ({"home/.config/plait/config.toml": f'openai_api_key = "{FAKE_KEY[:-4]}"\n'}, {}, ["show", "last", "--json"]),
        ({"home/.config/plait/config.toml": "max_steps = 0\n"}, {}, ["runs"]),
        ({"home/.config/plait/config.toml": "max_steps = [\n"}, {}, ["status", "--plain"]),
        ({"project/.plait.toml": 'store = "postgresql://db.example/plait"\nmax_steps = 5\n'}, {}, ["runs"]),
        ({}, {"PLAIT_STORE": "sqlite:///elsewhere.db"}, ["cost", "last"]),
        ({}, {"PLAIT_MAX_STEPS": "many"}, ["log", "last"]),
    ],
    ids=["a configured key", "a bad value", "a broken file", "an untrusted repository file", "a bad store", "env"],
)
def test_the_fast_start_reads_the_settings_as_typer_does(
    recorded: Path,
    files: dict[str, str],
    env: dict[str, str],
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, text in files.items():
        path = recorded.parent / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    fast = _run(argv, fast=True, project=recorded, capsys=capsys)
    assert fast == _run(argv, fast=False, project=recorded, capsys=capsys)
    assert FAKE_KEY[:-4] not in fast[1] + fast[2]


def test_the_fast_start_knows_every_setting() -> None:
    """A setting it does not know could be set in the environment while it takes every setting as its default."""
    assert set(Settings.model_fields) == SETTING_NAMES


@pytest.mark.parametrize("words", ["plait ru", "plait runs --j", "plait "])
def test_shell_completion_is_typers(
    recorded: Path, words: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("_PLAIT_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split(" ")) - 1))
    fast = _run([], fast=True, project=recorded, capsys=capsys)
    assert fast == _run([], fast=False, project=recorded, capsys=capsys)
    assert "Usage" not in fast[1]
