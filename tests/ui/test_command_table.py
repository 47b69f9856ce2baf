"""The static command table the top-level help is drawn from, and every command is registered in, cannot drift
from the commands themselves."""

from __future__ import annotations

import inspect
import pkgutil
from importlib import import_module

import pytest
from typer.models import ParameterInfo

import plait.cli
from plait.cli import main
from plait.cli._app import load_command
from plait.cli._commands import COMMANDS


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def _command_modules() -> set[str]:
    """Every module that defines commands: the command line's `cmd_` modules."""
    return {f"plait.cli.{m.name}" for m in pkgutil.iter_modules(plait.cli.__path__) if m.name.startswith("cmd_")}


def _takes_options(function: object, names: dict[str, object]) -> bool:
    """Whether `function` declares typer arguments or options (itself, or by an alias in its module): a command."""
    if not inspect.isfunction(function):
        return False
    for hint in function.__annotations__.values():
        alias = names.get(str(hint))
        if "typer." in str(hint) or any(isinstance(m, ParameterInfo) for m in getattr(alias, "__metadata__", ())):
            return True
    return False


def test_every_command_is_in_the_table_under_its_module() -> None:
    assert {entry.module for entry in COMMANDS.values()} == _command_modules()
    named = {(e.module, f) for name, e in COMMANDS.items() for f in (e.subcommands or (e.function or name,))}
    for module_name in _command_modules():
        module = import_module(module_name)
        functions = vars(module)
        defined = {(module_name, n) for n, f in functions.items() if _takes_options(f, functions)}
        assert defined == {(m, f) for m, f in named if m == module_name}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_table_line_is_the_first_paragraph_of_the_command_help(name: str) -> None:
    command = load_command(name)
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
