"""Worktree bootstrap: untracked files copied in, a setup command, and a block of ports per agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.errors import EnvironmentProblem
from plait.workspace import LocalShell, Repo
from plait.workspace.bootstrap import Bootstrap, include_patterns, port_env


def test_untracked_files_listed_in_settings_or_worktreeinclude_are_copied(repo: Repo, tmp_path: Path) -> None:
    (repo.root / ".env").write_text("TOKEN=local\n")
    (repo.root / "config").mkdir()
    (repo.root / "config" / "dev.json").write_text("{}")
    (repo.root / ".worktreeinclude").write_text("# local files\nconfig/*.json\n")
    patterns = include_patterns(repo.root, [".env"])
    assert patterns == [".env", "config/*.json"]
    wt = repo.add_worktree(tmp_path / "wt", "b", repo.head())
    copied = Bootstrap(repo.root, tuple(patterns)).copy_includes(wt.path)
    assert copied == [".env", "config/dev.json"]
    assert (wt.path / ".env").read_text() == "TOKEN=local\n" and (wt.path / "config" / "dev.json").exists()


def test_the_setup_command_runs_in_the_worktree_and_a_failure_is_one_line(repo: Repo, tmp_path: Path) -> None:
    wt = repo.add_worktree(tmp_path / "wt", "b", repo.head())
    asyncio.run(Bootstrap(repo.root, setup_command="echo ready > made.txt").run_setup(wt.path, LocalShell()))
    assert (wt.path / "made.txt").read_text() == "ready\n"
    failing = Bootstrap(repo.root, setup_command="echo cannot install; exit 3")
    with pytest.raises(EnvironmentProblem, match="setup command .* failed in wt: cannot install"):
        asyncio.run(failing.run_setup(wt.path, LocalShell()))


def test_each_agent_gets_its_own_block_of_ports() -> None:
    blocks = [port_env(slot, 20) for slot in range(3)]
    bases = [int(b["PLAIT_PORT_BASE"]) for b in blocks]
    assert bases == [20000, 20020, 20040] and all(b["PLAIT_PORT_COUNT"] == "20" for b in blocks)
    assert blocks[1]["PORT"] == "20020"
