"""`plait.cli.main` runs a command line in this process and returns its exit code: it exits nothing, and leaves
the process as it found it, so that one call cannot change what the next one does."""

from __future__ import annotations

import json
import logging
import os
import signal
from pathlib import Path

import pytest
from cli_support import git

from plait.cli import main
from plait.events import RunFinished, SQLiteEventStore


def _state() -> tuple[Path, dict[str, str], list[object], list[logging.Handler]]:
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)]
    return Path.cwd(), dict(os.environ), handlers, list(logging.getLogger().handlers)


def test_it_returns_the_exit_code_and_leaves_the_directory_and_the_environment(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    before = _state()
    assert main(["-C", str(project), "runs"]) == 0
    assert "no runs yet" in capsys.readouterr().out
    assert main(["-C", str(project), "runs", "--json", "--repo", "."]) == 0  # typer's start, not the fast one
    assert capsys.readouterr().out.strip() == "[]"
    assert main(["statu"]) == 2
    assert "Did you mean 'status'?" in capsys.readouterr().err
    assert main(["-C", str(tmp_path / "nowhere"), "runs"]) == 3
    assert _state() == before


def test_each_call_reads_the_environment_afresh(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["--version"]) == 0
    assert "\x1b[" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["--version"]) == 0
    assert "\x1b[" not in capsys.readouterr().out


def test_a_forced_terminal_of_an_earlier_call_does_not_style_the_next_ones_help(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """typer decides whether its help is styled when it is first imported: a first call with FORCE_COLOR set
    styled every later call's help, in a process where nothing forces it."""
    from typer import rich_utils

    monkeypatch.setattr(rich_utils, "FORCE_TERMINAL", True)  # as importing it during a FORCE_COLOR call leaves it
    for name in ("FORCE_COLOR", "NO_COLOR", "GITHUB_ACTIONS", "PY_COLORS"):
        monkeypatch.delenv(name, raising=False)
    assert main(["show", "-h"]) == 0
    out = capsys.readouterr().out
    assert "Usage:" in out and "--no-pager" in out and "\x1b[" not in out


_SCRIPT = """\
turns:
  - tool_calls:
      - {name: write_file, arguments: {path: greet.py, content: "def greet(name):\\n    return 'hi ' + name\\n"}}
  - tool_calls:
      - {name: finish, arguments: {summary: greet says hi}}
"""


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # the background run outlives its Popen, as it should
def test_a_detached_run_started_in_process_runs_the_command_line_it_was_given(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background run starts the command line `main` was given, not this process's own `sys.argv`."""
    (project / "script.yaml").write_text(_SCRIPT)
    git(project, "add", "script.yaml")
    git(project, "commit", "-q", "-m", "script")
    monkeypatch.chdir(project)
    model = f"scripted:{project / 'script.yaml'}"
    assert main(["run", "Make greet say hi", "--single", "--model", model, "--detach", "--json", "--yes"]) == 0
    started = json.loads(capsys.readouterr().out)
    os.waitpid(started["pid"], 0)  # the background run is this process's child
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    ended = [e for e in store.events(started["run_id"]) if isinstance(e, RunFinished)]
    store.close()
    assert [e.status for e in ended] == ["done"], Path(started["log"]).read_text()
