"""Run the real `plait` command in a throwaway home and repository, in this process; the real demo run, made once.

What needs a real process starts one itself: the demo run, a run interrupted by a signal (test_redacted_run), a
reader that closes the pipe (test_closed_pipe), a log followed while it grows (test_cmd_view), the MCP server
(test_mcp_*) and the modules a start imports (test_startup_imports, test_resume_imports); a detached run, started
in this process, starts its command line again in a process of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import Plait, Result, git, run_in_process


def _env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
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
def env(tmp_path: Path) -> dict[str, str]:
    return _env(tmp_path / "home")


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One real 4-task parallel demo run per test process (`plait demo --fast`): its repository and run id.

    Read it in place; a test that changes it takes `demo` instead, a copy of its own.
    """
    root = tmp_path_factory.mktemp("demo-run")
    where = root / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "plait", "demo", "--fast", "--dir", str(where), "--json"],
        cwd=root,
        env=_env(root / "home"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return where, str(json.loads(done.stdout)["run_id"])


@pytest.fixture
def demo(demo_run: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    """A copy of the demo run's repository for this test alone, and the run's id."""
    where, run_id = demo_run
    copy = tmp_path / "demo"
    shutil.copytree(where, copy, symlinks=True)
    return copy, run_id


@pytest.fixture
def plait(env: dict[str, str]) -> Plait:
    """`plait ARGS` run in this process (`plait.cli.main`), as a process of its own would run it."""

    def run(
        *args: str, cwd: Path, extra_env: dict[str, str] | None = None, stdin: str = "", fast: bool = True
    ) -> Result:
        return run_in_process(args, cwd, {**env, **(extra_env or {})}, stdin, fast=fast)

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
