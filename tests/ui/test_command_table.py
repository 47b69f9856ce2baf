"""The static command table the top-level help is drawn from cannot drift from the commands themselves."""

from __future__ import annotations

import pkgutil
from importlib import import_module

import pytest
import typer

import plait.ui
from plait.ui.cli import COMMANDS, app, load_command, main


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def _registered() -> dict[str, str]:
    """Every command the command modules and the root app define, with the module that defines it."""
    found = {
        info.name or (info.callback.__name__ if info.callback else ""): "plait.ui.cli"
        for info in app.registered_commands
    }
    for module_info in pkgutil.iter_modules(plait.ui.__path__):
        if not module_info.name.startswith("cmd_"):
            continue
        module = import_module(f"plait.ui.{module_info.name}")
        own = typer.Typer()
        module.register(own)
        found |= dict.fromkeys(typer.main.get_group(own).commands, module.__name__)
    return found


def test_every_command_is_in_the_table_under_its_module() -> None:
    assert {name: entry.module for name, entry in COMMANDS.items()} == _registered()


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_table_line_is_the_first_paragraph_of_the_command_help(name: str) -> None:
    command = typer.main.get_group(app).commands[name] if COMMANDS[name].module == "plait.ui.cli" else None
    command = command or load_command(name)
    assert COMMANDS[name].help == _first_paragraph(command.help)


def test_the_top_level_help_lists_every_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    for name, entry in COMMANDS.items():
        assert f" {name} " in shown and entry.help[:60] in shown


def test_a_command_help_is_its_full_help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["status", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "Usage: plait status" in shown and "--interval" in shown and "--plain" in shown
    assert main(["policy", "check", "--help"]) == 0
    assert "--preset" in capsys.readouterr().out


def test_an_unknown_command_is_a_usage_error_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["statu"]) == 2
    assert "Did you mean 'status'?" in capsys.readouterr().err
