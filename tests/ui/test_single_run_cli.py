"""`plait run --single` through the real CLI: the gate checks the agent's result with the verify command, in the
sandbox, and the progress lines and the summary say what it decided."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from cli_support import Plait, git

from plait.workspace.sandbox import probe

VERIFY = f"{sys.executable} -m pytest -q -p no:cacheprovider"


def _script(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"turns": turns}))
    return f"scripted:{path}"


def _tested(project: Path) -> None:
    (project / "test_greet.py").write_text(
        'from greet import greet\n\n\ndef test_greet():\n    assert greet("a") == "hello a"\n'
    )
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a test")


def _edit(new: str) -> dict[str, object]:
    edit = {"path": "greet.py", "old": '"hello " + name', "new": new}
    return {"tool_calls": [{"name": "edit_file", "arguments": edit}]}


FINISH = {"tool_calls": [{"name": "finish", "arguments": {"summary": "greet says hi"}}]}


def test_a_single_run_shows_the_gates_verdict_and_only_then_is_done(
    plait: Plait, project: Path, tmp_path: Path
) -> None:
    _tested(project)
    model = _script(tmp_path, [_edit('"hello " + name  # kind'), FINISH])
    result = plait(
        "run",
        "be kind",
        "--single",
        "--no-tui",
        "--model",
        model,
        cwd=project,
        extra_env={"PLAIT_VERIFY_COMMAND": VERIFY},
    )
    assert result.code == 0, result.err
    err = result.err.splitlines()
    assert f"run verify command `{VERIFY}` passes at the base; the gate runs it on the agents' work" in err
    assert any(
        line.startswith("gate passed main @ ") and line.endswith(": 1 passed in " + line.split(" in ")[-1])
        for line in err
    ), err
    assert any(line.startswith("main integrated: plait/") and line.count("/main @ ") == 1 for line in err), err


def test_a_single_run_the_gate_turns_down_fails_with_its_reason(plait: Plait, project: Path, tmp_path: Path) -> None:
    _tested(project)
    model = _script(tmp_path, [_edit('"hi " + name'), FINISH])
    env = {"PLAIT_VERIFY_COMMAND": VERIFY, "PLAIT_MAX_ATTEMPTS": "1"}
    result = plait("run", "say hi", "--single", "--no-tui", "--model", model, cwd=project, extra_env=env)
    assert result.code == 1, result.err
    rejected = [line for line in result.err.splitlines() if line.startswith("main rejected: ")]
    assert len(rejected) == 1 and rejected[0].endswith("no attempt left (1 of 1): it is dropped")
    assert "FAILED test_greet.py::test_greet" in rejected[0]
    headline = result.out.splitlines()[0]
    assert headline.startswith("failed run ") and "the verify check failed: " in headline
    assert "its work (not verified): branch plait/" in result.out and "/main.1 @ " in result.out


def test_a_run_closes_its_agents_shells_when_they_end(plait: Plait, project: Path, tmp_path: Path) -> None:
    """In this process (as `main(argv)` runs it), a finished run leaves none of its agents' cgroups behind: each
    attempt's shell is closed when the attempt ends, not whenever the garbage collector gets to it."""
    found = probe()
    parents = [p for p in (found.cgroup, found.memory_cgroup) if p]
    if not parents:
        pytest.skip(f"no cgroup for plait to make here: {found.cgroup_problem}")

    def mine() -> set[Path]:
        return {d for parent in parents for d in Path(parent).glob(f"plait-{os.getpid()}-*")}

    before = mine()
    model = _script(tmp_path, [_edit('"hello " + name  # kind'), FINISH])
    result = plait("run", "be kind", "--single", "--no-tui", "--model", model, cwd=project)
    assert result.code == 0, result.err
    assert "main integrated: plait/" in result.err
    assert mine() - before == set()
