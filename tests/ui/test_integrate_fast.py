"""`plait integrate` with plain options starts without typer (`plait.cli._fast`) and prints what typer's command
prints, exits as it exits, and leaves to typer what it does not read: every command line here runs both ways, each
on a repository of its own made alike, and the two are compared (run ids and merge commits taken out)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import Plait, git
from integrate_cases import make_branches, normalized

from plait.cli._fast import start

HERE = "<project>"
"""Stands for the project's path in a command line."""

COMMAND_LINES = [
    ["hello", "bye", "--no-llm", "--no-verify"],
    ["--no-llm", "hello", "--no-verify", "bye", "--json"],
    ["hello", "bye", "--no-llm", "--no-verify", "--onto", "main"],
    ["hello", "--onto=main~0", "--no-llm", "--no-verify", "--json", "--json"],
    ["hello", "--onto", "main", "--onto", "hello", "--no-llm", "--no-verify"],
    ["hello", "hello", "bye", "--no-llm", "--no-verify"],
    ["hi", "hey", "--no-llm", "--no-verify"],
    ["hi", "hey", "--no-verify"],
    ["hi", "hey", "--no-verify", "-m", "no-such-provider:model"],
    ["hi", "hey", "--no-llm", "--no-verify", "--model=other"],
    ["hello", "--no-llm", "--verify", "true"],
    ["hello", "--no-llm", "--verify=false"],
    ["hello", "--no-llm", "--verify", "true", "--no-verify"],
    ["hello", "nosuch", "--no-llm", "--no-verify"],
    ["hello", "--no-llm", "--no-verify", "--onto", "nosuch"],
    ["hello", "--no-llm", "--no-verify", "--onto", "-x"],
    ["hello", "--no-llm", "--no-verify", "--onto"],
    ["hello", "--no-llm", "--no-verify", "-C", HERE],
    ["hello", "--no-llm", "--no-verify", f"--repo={HERE}"],
    ["hello", "--no-llm", "--no-verify", "--repo", "/no/such/dir"],
    ["hello", "--no-llm=yes"],
    ["hello", "-mother", "--no-llm", "--no-verify"],
    ["hello", "--no-llm", "--no-verify", "--unknown"],
    ["--", "hello", "--no-llm"],
    ["--help"],
    [],
]


def _run(plait: Plait, root: Path, args: list[str], *, fast: bool) -> tuple[int, str, str]:
    shown = [str(root) if a == HERE else a.replace(HERE, str(root)) for a in args]
    done = plait("integrate", *shown, cwd=root, fast=fast)
    return done.code, normalized(done.out.replace(str(root), HERE)), normalized(done.err.replace(str(root), HERE))


@pytest.mark.parametrize("args", COMMAND_LINES, ids=lambda args: " ".join(args) or "(none)")
def test_the_fast_start_integrates_as_typer_does(plait: Plait, tmp_path: Path, args: list[str]) -> None:
    ran = []
    for way in ("fast", "typer"):
        root = tmp_path / way
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        make_branches(root)
        ran.append(_run(plait, root, args, fast=way == "fast"))
    assert ran[0] == ran[1]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["integrate", "hello", "bye", "--no-llm", "--no-verify"], 0),
        (["-C", HERE, "integrate", "--json", "hi", "hey", "--no-llm", "--no-verify"], 1),
        (["integrate", "hello", "-m", "other", "--verify", "true", "--repo", HERE, "--no-llm"], 0),
    ],
)
def test_plain_integrate_options_are_read_without_typer(
    project: Path, args: list[str], code: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)  # and back after, though -C moves
    make_branches(project)
    assert start([str(project) if a == HERE else a for a in args]) == code  # None: left to typer
    assert "hello" in capsys.readouterr().out
