"""The gate's verify command runs the branches' own tests, so it runs confined: an agent's conftest.py tries to
write outside its checkout, read the user's ssh key and an API key from the environment, and fails at all three;
the gate still runs the tests and says honestly whether they pass."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from gitrepo import IDENTITY, Sandbox, git

from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import GateChecked
from plait.reconcile.gate import Gate
from plait.sandbox_settings import Limits, SandboxSettings
from plait.settings import Settings
from plait.workspace import Shell
from plait.workspace.sandbox import Probe, probe, sandboxed_shell

SECRET = "sk-gate-" + uuid.uuid4().hex
SSH = "ssh-gate-" + uuid.uuid4().hex
PYTEST = f"{sys.executable} -m pytest -q -s -p no:cacheprovider"

# What an agent could commit: tests whose conftest.py tries to get out, and prints what it got (pytest -s shows it).
CONFTEST = """\
import os, pathlib
got = ["ran"]
for target in {targets!r}:
    try:
        pathlib.Path(target).write_text("pwned")
        got.append("wrote " + target)
    except OSError:
        pass
try:
    got.append("ssh " + (pathlib.Path.home() / ".ssh" / "id_ed25519").read_text())
except OSError:
    pass
got.append("env " + os.environ.get("GATE_SERVICE_API_KEY", ""))
print("conftest: " + " | ".join(got))
"""
PASSING = "def test_it():\n    assert 1 + 1 == 2\n"
FAILING = "def test_it():\n    assert 1 + 1 == 3\n"


@functools.cache
def found() -> Probe:
    return probe()


def layers() -> list[Any]:
    return [
        pytest.param(n, marks=pytest.mark.skipif(n not in found().usable(), reason=f"{n} cannot run here"))
        for n in ("bwrap", "landlock")
    ]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SSH + "\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GATE_SERVICE_API_KEY", SECRET)
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    return home


@pytest.fixture
def box(tmp_path: Path, home: Path) -> Sandbox:
    box = Sandbox(tmp_path / "repo")
    box.start({"tests/test_base.py": PASSING, "README.md": "hi\n"})
    return box


def _targets(box: Sandbox, tmp_path: Path) -> list[str]:
    (tmp_path / "outside").mkdir(exist_ok=True)
    common = box.repo.common_dir if box.repo else box.root / ".git"
    return [str(tmp_path / "outside" / "pwned.txt"), str(box.root / "PWNED"), str(common / "hooks" / "pre-commit")]


def _hostile(box: Sandbox, tmp_path: Path, test: str) -> str:
    base = box.git("rev-parse", "main")
    files = {"conftest.py": CONFTEST.format(targets=_targets(box, tmp_path)), "tests/test_agent.py": test}
    return box.commit(files, "an agent's tests", parent=base)


def _runner_for(box: Sandbox, store: SQLiteEventStore, layer: str, **options: Any) -> Any:
    settings = Settings(sandbox=SandboxSettings(layer=layer, limits=Limits(processes=64), **options))
    assert box.repo is not None
    repo = box.repo

    def make(worktree: Path) -> Shell:
        return sandboxed_shell(
            settings,
            worktree=worktree,
            common_dir=repo.common_dir,
            log=RunLog(store, "r1"),
            agent="gate",
            interactive=False,
            found=found(),
        )

    return make


def _escaped(tmp_path: Path, box: Sandbox) -> list[str]:
    return [t for t in _targets(box, tmp_path) if Path(t).exists()]


@pytest.mark.parametrize("layer", layers())
@pytest.mark.parametrize("test", [PASSING, FAILING], ids=["passing", "failing"])
def test_the_gate_runs_agents_tests_confined_and_reports_them_honestly(
    box: Sandbox, tmp_path: Path, layer: str, test: str
) -> None:
    assert box.repo is not None
    commit = _hostile(box, tmp_path, test)
    store = SQLiteEventStore(tmp_path / "events.db")
    gate = Gate(
        box.repo,
        base=box.git("rev-parse", "main"),
        log=RunLog(store, "r1"),
        verify_command=PYTEST,
        runner_for=_runner_for(box, store, layer),
    )
    try:
        result = asyncio.run(gate.check(commit))
    finally:
        gate.close()
    assert result.stage == "verify" and result.passed is (test == PASSING), result.output
    leak = result.output.split("conftest: ", 1)[1].splitlines()[0]
    assert ("2 passed" if test == PASSING else "1 failed, 1 passed") in result.output
    assert leak == "ran | env ", leak  # it ran, and got nothing
    assert _escaped(tmp_path, box) == []
    assert not gate.worktree.path.exists()


def test_without_an_os_sandbox_the_gate_verifies_nothing_unless_allowed(box: Sandbox, tmp_path: Path) -> None:
    assert box.repo is not None
    commit = _hostile(box, tmp_path, PASSING)
    store = SQLiteEventStore(tmp_path / "events.db")
    gate = Gate(
        box.repo,
        base=box.git("rev-parse", "main"),
        log=RunLog(store, "r1"),
        verify_command=PYTEST,
        runner_for=_runner_for(box, store, "none", allow_unsandboxed=False),
    )
    try:
        result = asyncio.run(gate.check(commit))
    finally:
        gate.close()
    assert not result.passed and result.stage == "verify"
    assert "did not run" in result.output and "sandbox.allow_unsandboxed" in result.output
    assert gate.base_fails is None  # a refusal is not taken for the base failing too
    assert _escaped(tmp_path, box) == []


def test_plait_integrate_confines_the_verify_command(box: Sandbox, tmp_path: Path, home: Path) -> None:
    """The command line: `plait integrate` gates with the branches' own tests, confined."""
    if "bwrap" not in found().usable() and "landlock" not in found().usable():
        pytest.skip("no OS sandbox works here")
    box.git("update-ref", "refs/heads/agent", _hostile(box, tmp_path, PASSING))
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "plait", "integrate", "agent", "--no-llm", "--json", "--verify", PYTEST],
        cwd=box.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [b["outcome"] for b in data["branches"]] == ["integrated"]
    assert _escaped(tmp_path, box) == []
    log = SQLiteEventStore(box.root / ".git" / "plait" / "events.db")
    outputs = [e.output for e in log.events(data["run_id"]) if isinstance(e, GateChecked)]
    assert any("2 passed" in o and "conftest: ran | env \n" in o for o in outputs), outputs
    assert git(box.root, "status", "--porcelain") == ""
