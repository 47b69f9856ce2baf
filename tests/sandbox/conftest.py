"""A real repository with an agent's worktree inside its shared .git, a fake home with a key, and runners per layer."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sandbox_box import FAKE_KEY, SSH_MARKER, Box, MakeBox, found

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.sandbox_settings import Limits, SandboxSettings
from plait.settings import Settings
from plait.workspace import Repo
from plait.workspace.sandbox import SandboxedShell, sandboxed_shell


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    ssh = home / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "config").write_text(f"Host x\n  # {SSH_MARKER}\n")
    (ssh / "id_ed25519").write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + SSH_MARKER + "\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("FAKE_SERVICE_API_KEY", FAKE_KEY)
    for key, value in {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "T"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@t")
    return home


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Repo:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return Repo.discover(root)


@pytest.fixture
def make_box(tmp_path: Path, repo: Repo, home: Path) -> Iterator[MakeBox]:
    """Build a Box for a layer; extra keyword arguments go to SandboxSettings, `limits` to Limits."""
    made: list[SandboxedShell] = []
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original\n")

    def build(layer: str, *, interactive: bool = False, asker: Any = None, grace: float = 2.0, **options: Any) -> Box:
        limits = Limits(**{"processes": 64, "cpu_seconds": 60, **options.pop("limits", {})})
        options.setdefault("allow_unsandboxed", True)
        settings = Settings(sandbox=SandboxSettings(layer=layer, limits=limits, **options))
        worktree = repo.add_worktree(repo.plait_dir() / "worktrees" / "run1" / f"t{len(made)}", f"t{len(made)}", "HEAD")
        store = SQLiteEventStore(tmp_path / f"events{len(made)}.db")
        runner = sandboxed_shell(
            settings,
            worktree=worktree.path,
            common_dir=repo.common_dir,
            log=RunLog(store, "run1"),
            agent=f"t{len(made)}",
            interactive=interactive,
            asker=asker,
            found=found(),
            grace=grace,
        )
        made.append(runner)
        return Box(repo, worktree.path, outside, home, store, runner)

    yield build
    for runner in made:
        runner.close()
