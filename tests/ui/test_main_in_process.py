"""`plait.cli.main` runs a command line in this process and returns its exit code: it exits nothing, and leaves
the process as it found it, so that one call cannot change what the next one does."""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

import pytest

from plait.cli import main


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
