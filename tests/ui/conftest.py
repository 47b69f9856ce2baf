"""Run the real `plait` command in a subprocess, in a throwaway home and repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import Plait, Result, git


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "SYSTEMROOT", "TMPDIR")}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "COLUMNS": "200",
    }


@pytest.fixture
def plait(env: dict[str, str]) -> Plait:
    def run(*args: str, cwd: Path, extra_env: dict[str, str] | None = None, stdin: str = "") -> Result:
        proc = subprocess.run(
            [sys.executable, "-m", "plait", *args],
            cwd=cwd,
            env={**env, **(extra_env or {})},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "greet.py").write_text('def greet(name):\n    return "hello " + name\n')
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root
