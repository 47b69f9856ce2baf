"""A real repository for runs to work on."""

from __future__ import annotations

from pathlib import Path

import pytest
from integrators import git

from plait.workspace import Repo
from plait.workspace.git import PLAIT_IDENTITY


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for key, value in PLAIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for name in ("alpha", "beta", "gamma"):
        (root / f"{name}.py").write_text(f"def {name}():\n    return 0\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return Repo.discover(root)
