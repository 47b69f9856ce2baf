"""kill -9 at random moments, then `plait resume`, again and again: the result is the uncrashed one.

A real `plait` process runs the parallel demo's scripted run (a planner, four agents, a conflict the
ladder resolves, the gate running the project's tests) against a model server in this process. Set
PLAIT_SOAK=N to kill N times per run in many more runs.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from keyed_model import KeyedModel

from wire_server import WireServer

DEMO = resources.files("plait.demo")
SOAK = int(os.environ.get("PLAIT_SOAK", "0"))
MARK = re.compile(r"\[answer (\d+)\]")


RUN_FLAGS = ("--yes", "--json", "--no-llm-merge", "--split", "always")  # the demo's plan, as the planner made it


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _project(where: Path, env: dict[str, str]) -> Path:
    with resources.as_file(DEMO / "repo") as source:
        shutil.copytree(source, where, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "tally"]):
        subprocess.run(["git", *args], cwd=where, env=env, check=True, capture_output=True)
    return where


def _env(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {
        "PATH": path,
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PLAIT_CONCURRENCY": "1",
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }


def _default_sigint() -> None:
    """Ctrl-C as a terminal delivers it: a test run started in the background inherits SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _plait(args: list[str], repo: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "plait", *args, "-C", str(repo)],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )


def _events(repo: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(repo / ".git" / "plait" / "events.db")
    rows = db.execute("SELECT seq, payload FROM events ORDER BY seq").fetchall()
    db.close()
    return [{"seq": seq, **json.loads(payload)} for seq, payload in rows]


def _events_so_far(repo: Path) -> list[dict[str, Any]]:
    """The run's events so far; none before its log is made (the file exists a moment before its table)."""
    try:
        return _events(repo) if (repo / ".git" / "plait" / "events.db").exists() else []
    except sqlite3.OperationalError:
        return []


def _kill(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


def _run(tmp: Path, name: str, kills: list[float]) -> tuple[Path, KeyedModel, list[str]]:
    env = _env(tmp)
    repo = _project(tmp / name, env)
    task = (DEMO / "parallel_task.txt").read_text().strip()
    with resources.as_file(DEMO / "parallel.yaml") as script:
        model = KeyedModel(script, delay_scale=0.3)
    phases: list[str] = []
    with WireServer(model) as server:
        spec = f"openai-compatible:demo@{server.openai_url}"
        proc = _plait(["run", task, "--model", spec, *RUN_FLAGS], repo, env)
        for delay in kills:
            time.sleep(delay)
            if proc.poll() is not None:
                break
            _kill(proc)
            events = _events_so_far(repo)
            phases.append(events[-1]["kind"] if events else "start")
            if any(e["kind"] == "run_started" for e in events):
                proc = _plait(["resume", "last", "--json"], repo, env)
            else:  # killed before the run was logged: nothing to lose, nothing to resume
                proc = _plait(["run", task, "--model", spec, *RUN_FLAGS], repo, env)
        code, out, err = _finish(proc)
        if code != 0 and "nothing to resume" not in out:
            pytest.fail(f"the last process failed ({code}): {err[-2000:]}")
    return repo, model, phases


def _integration_tree(repo: Path) -> str:
    branch = next(
        b for b in _git(repo, "branch", "--format=%(refname:short)").splitlines() if b.endswith("/integration")
    )
    return _git(repo, "rev-parse", f"{branch}^{{tree}}")


def _check(repo: Path, model: KeyedModel, clean_tree: str, kills: int) -> None:
    assert _integration_tree(repo) == clean_tree
    events = _events(repo)
    # no completed model call was answered again: the answer the log kept is the last one the server gave
    logged: dict[tuple[str, int, int], int] = {}
    for e in events:
        if e["kind"] == "model_response":
            marker = MARK.search(e["response"]["text"])
            assert marker, e["response"]["text"]
            key = (e["agent"], e["attempt"], e["call"])
            assert key not in logged, f"model call {key} logged twice"
            logged[key] = int(marker.group(1))
    kept = set(logged.values())
    lost = 0
    for key, answers in model.answers.items():
        last_kept = max((a for a in answers if a in kept), default=None)
        assert last_kept is not None, f"{key} was answered but no answer was logged"
        assert answers[-1] == last_kept, f"{key} was answered again after its answer was logged: {answers}"
        lost += len(answers) - 1
    assert lost <= kills  # only a call in flight at a kill may be paid twice
    # no event duplicated
    once = Counter(
        (e["kind"], e["agent"], e.get("attempt"), e.get("step"), e.get("call_id") or e.get("call", {}).get("id"))
        for e in events
        if e["kind"] in ("tool_call", "tool_result", "prompt", "task_started", "commit")
    )
    assert [k for k, n in once.items() if n > 1] == []
    finished = {e["agent"] for e in events if e["kind"] == "task_finished" and e["status"] == "done"}
    assert finished == {"csv-export", "percent-split", "storage-errors", "remove-expense"}
    # no leftover worktrees
    assert _git(repo, "worktree", "list").count("\n") == 0
    assert not any((repo / ".git" / "plait" / "worktrees").glob("*/*"))


@pytest.fixture(scope="module")
def clean_tree(tmp_path_factory: pytest.TempPathFactory) -> str:
    repo, model, _ = _run(tmp_path_factory.mktemp("clean"), "clean", [])
    assert all(len(a) == 1 for a in model.answers.values())
    return _integration_tree(repo)


@pytest.mark.parametrize("seed", range(SOAK or 3))
def test_killed_and_resumed_runs_end_as_the_uncrashed_one(tmp_path: Path, clean_tree: str, seed: int) -> None:
    rng = random.Random(seed)
    kills = [rng.uniform(0.8, 4.0) for _ in range(max(SOAK, 2))]
    repo, model, phases = _run(tmp_path, f"crash{seed}", kills)
    print(f"seed {seed}: killed during {phases}")
    _check(repo, model, clean_tree, len(phases))
