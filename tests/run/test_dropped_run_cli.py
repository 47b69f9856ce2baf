"""A run that dropped a task is not done: the real `plait run` says which task and why, and exits non-zero."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from plait.workspace import Repo

_SCRIPT = {
    "conversations": [
        {
            "name": "alpha",
            "match": "Your task is `alpha`",
            "turns": [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "alpha.py"}}]},
                {
                    "expect": "return 0",
                    "tool_calls": [
                        {"name": "edit_file", "arguments": {"path": "alpha.py", "old": "return 0", "new": "return 1"}}
                    ],
                },
                {"tool_calls": [{"name": "finish", "arguments": {"summary": "alpha returns 1"}}]},
            ],
        },
        {"name": "beta", "match": "Your task is `beta`", "turns": [{"tool_calls": [{"name": "nope"}]}] * 3},
    ]
}
_PLAN = {
    "mode": "parallel",
    "tasks": [
        {"id": name, "title": f"change {name}", "instructions": f"Make {name} return 1.", "writes": [f"{name}.py"]}
        for name in ("alpha", "beta")
    ],
}


def _plait(repo: Repo, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    script, plan = tmp_path / "script.yaml", tmp_path / "plan.yaml"
    script.write_text(yaml.safe_dump(_SCRIPT))
    plan.write_text(yaml.safe_dump(_PLAN))
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "HOME": str(tmp_path / "home"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PLAIT_CONCURRENCY": "1",
        "PLAIT_MAX_ATTEMPTS": "1",
        "PLAIT_MAX_FORMAT_ERRORS": "2",
    }
    args = ["run", "change alpha and beta", "--plan", str(plan), "--model", f"scripted:{script}", "--yes"]
    argv = [sys.executable, "-m", "plait", *args, "--split", "always", "--no-tui", *flags, "-C", str(repo.root)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_a_run_that_dropped_a_task_says_so_and_exits_non_zero(repo: Repo, tmp_path: Path) -> None:
    done = _plait(repo, tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    headline = next(line for line in done.stdout.splitlines() if " run " in line)
    assert not headline.startswith("done") and "beta" in headline, done.stdout
    assert "Traceback" not in done.stderr


def test_the_json_of_a_run_that_dropped_a_task_is_not_done(repo: Repo, tmp_path: Path) -> None:
    done = _plait(repo, tmp_path, "--json")
    assert done.returncode == 1, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["status"] != "done" and data["tasks"]["alpha"]["status"] == "done"
    assert set(data["dropped"]) == {"beta"} and data["dropped"]["beta"]
    listed = subprocess.run(
        [sys.executable, "-m", "plait", "runs", "--json", "-C", str(repo.root)],
        capture_output=True, text=True, timeout=60, check=True, env={**os.environ, "HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert [r["status"] for r in json.loads(listed.stdout)] == ["incomplete"], "the log says so too, not `done`"
