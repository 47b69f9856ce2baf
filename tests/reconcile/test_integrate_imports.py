"""`plait integrate --no-llm --no-verify` imports what it uses: no run loop, no agent, no sandbox, no LLM rung, and
no typer (its plain options are read by the fast start), no rung of the ladder when git merges alone, and no YAML
reader when no YAML file changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

FORBIDDEN = (
    "plait.run.one_agent",
    "plait.run.parallel",
    "plait.agent",
    "plait.workspace.sandbox",
    "plait.reconcile.llm_resolver",
    "plait.reconcile.apply",
    "openai",
    "anthropic",
    "textual",
    "mcp",
    "typer",
    "rich.markdown",
    "plait.reconcile.deterministic",
    "plait.reconcile.structured",
    "yaml",
)

_PROBE = """
import json, sys
from plait.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_a_model_free_integrate_without_verify_imports_only_the_merge_and_the_gate(box: Sandbox) -> None:
    base = box.start({"a.py": "A = 1\n"})
    box.branch("one", {"b.py": "from a import A\n"}, parent=base)
    box.branch("two", {"c.py": "C = 2\n"}, parent=base)
    argv = ["integrate", "one", "two", "--no-llm", "--no-verify"]
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], cwd=box.root, env=dict(os.environ), capture_output=True, text=True
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] in (0, None), proc.stdout + proc.stderr
    loaded = [m for m in report["modules"] if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert loaded == []
    assert "plait.reconcile.gate" in report["modules"]
