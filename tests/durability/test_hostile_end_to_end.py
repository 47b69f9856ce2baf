"""Real `plait run` processes against a model server whose replies are hostile, over both wire formats.

Whatever the model sends (malformed or unknown tool calls, arguments of the wrong type, unpaired
surrogates, nesting 1000 deep, a 10 MB summary, bodies that are not JSON, odd usage, refusals, cut-off
replies) and whatever the server does (429 asking for a day's wait, 5xx, x-should-retry: false, a closed
port), a user gets what the README promises: no traceback, a one-line error or a clean finish with a
conventional exit code, a log that reads back at once, and every model request answered in it.
Set PLAIT_SOAK=N for every case on both wire formats and N seeded mixes of hostile replies.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_replies import CASES, HostileModel, finish, plan_of

from wire_server import WireServer

SOAK = int(os.environ.get("PLAIT_SOAK", "0"))
TRACEBACK = "Traceback (most recent call last)"
EXIT_CODES = {0, 1, 4}  # done, did not finish, the model provider (README "Exit codes")
FORMATS = ("openai", "anthropic")
MODELS = {"openai": "openai:gpt-5.1", "anthropic": "anthropic:claude-sonnet-4-5"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=30).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "greet.py").write_text('def greet(name):\n    return "hello " + name\n')
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "initial")
    return root


def _env(tmp: Path, fmt: str, url: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "PLAIT_MAX_STEPS": "8",
    }
    if fmt == "openai":
        return env | {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": url + "/v1"}
    return env | {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": url}


def _plait(repo: Path, env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plait", *args, "-C", str(repo)],
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _start(repo: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "plait", *args, "-C", str(repo)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        stdin=subprocess.DEVNULL,
    )


def _events(repo: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(repo / ".git" / "plait" / "events.db")
    try:
        rows = db.execute("SELECT payload FROM events ORDER BY seq").fetchall()
    finally:
        db.close()
    return [json.loads(payload) for (payload,) in rows]


def _json(out: str, args: list[str]) -> None:
    """`out` is one JSON document, or JSON lines."""
    try:
        json.loads(out)
    except ValueError:
        assert [json.loads(line) for line in out.splitlines()], args


def _check(repo: Path, env: dict[str, str], run: subprocess.CompletedProcess[str]) -> None:
    """What every run promises, however the model behaved."""
    shown = f"exit {run.returncode}\nstderr tail: {run.stderr[-1500:]!r}\nstdout tail: {run.stdout[-800:]!r}"
    assert TRACEBACK not in run.stderr and TRACEBACK not in run.stdout, shown
    assert run.returncode in EXIT_CODES, shown
    if run.returncode != 0:  # the last line says why: a run's verdict, or `plait: error: ...`
        last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
        assert last and len(last) < 1000, shown
    readers = [  # both at once, each within 20 s, even after a 10 MB reply
        (args, _start(repo, env, *args)) for args in (["show", "last", "--no-pager", "--json"], ["status", "--json"])
    ]
    for args, proc in readers:
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"plait {' '.join(args)} did not read the log back within 20 s")
        assert proc.returncode == 0 and TRACEBACK not in err, (args, err[-1500:])
        _json(out, args)
    events = _events(repo)
    asked = {(e["agent"], e["attempt"], e["call"]) for e in events if e["kind"] == "model_request"}
    answered = {(e["agent"], e["attempt"], e["call"]) for e in events if e["kind"] in ("model_response", "model_error")}
    assert asked, "no model request was logged"
    assert asked - answered == set(), f"model requests with no response or error in the log: {asked - answered}"


def _run_case(
    tmp: Path, repo: Path, fmt: str, model: HostileModel, *flags: str
) -> tuple[subprocess.CompletedProcess[str], WireServer, dict[str, str]]:
    with WireServer(model) as server:
        env = _env(tmp, fmt, server.url)
        run = _plait(repo, env, "run", "Make greet punctuate", "--model", MODELS[fmt], "--yes", *flags)
    return run, server, env


QUICK = {  # one case of each kind by default, on alternating wire formats; every case on both under PLAIT_SOAK
    "malformed-json-arguments": "openai",
    "unknown-tool": "anthropic",
    "wrong-types": "openai",
    "unpaired-surrogates": "anthropic",
    "arguments-nested-1000": "openai",
    "body-nested-1000": "anthropic",
    "ten-mb-summary": "openai",
    "ten-mb-text": "anthropic",
    "one-mb-path": "anthropic",
    "duplicate-call-ids": "openai",
    "html-body": "anthropic",
    "invalid-utf8-body": "openai",
    "usage-strings": "anthropic",
    "cut-every-time": "anthropic",
    "refusal": "openai",
    "server-error-always": "anthropic",
    "retry-after-100000": "openai",
    "should-retry-false": "anthropic",
}


def _cases() -> Iterator[Any]:
    for name in CASES:
        for fmt in FORMATS:
            if SOAK or QUICK.get(name) == fmt:
                yield pytest.param(name, fmt, id=f"{name}-{fmt}")


@pytest.mark.parametrize(("case", "fmt"), list(_cases()))
def test_a_hostile_reply_ends_cleanly(tmp_path: Path, repo: Path, case: str, fmt: str) -> None:
    turns, fallback = CASES[case]
    run, server, env = _run_case(tmp_path, repo, fmt, HostileModel(turns, fallback), "--single")
    _check(repo, env, run)
    if case == "retry-after-100000":
        assert len(server.requests) == 1  # no retry: the wait asked for is past the budget
        assert "asked to wait 28 h" in run.stderr.strip().splitlines()[-1], run.stderr[-1500:]
    if case == "should-retry-false":
        assert len(server.requests) == 1
        assert "down for good" in run.stderr.strip().splitlines()[-1], run.stderr[-1500:]


@pytest.mark.parametrize(("seed", "fmt"), [(s, f) for s in range(SOAK) for f in FORMATS] or [(0, "openai")])
def test_a_seeded_mix_of_hostile_replies_ends_cleanly(tmp_path: Path, repo: Path, fmt: str, seed: int) -> None:
    rng = random.Random(seed)
    builds = [b for turns, fallback in CASES.values() for b in (*turns, fallback)]
    turns = rng.sample(builds, rng.randint(1, 6))
    run, _, env = _run_case(tmp_path, repo, fmt, HostileModel(turns, lambda f: finish()), "--single")
    _check(repo, env, run)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_refused_local_connection_is_reported_at_once(tmp_path: Path, repo: Path, fmt: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    env = _env(tmp_path, fmt, url)
    run = _plait(repo, env, "run", "Make greet punctuate", "--model", MODELS[fmt], "--yes", "--single", timeout=60)
    _check(repo, env, run)
    assert run.returncode == 4, run.stderr[-1500:]
    assert "nothing is listening" in run.stderr.strip().splitlines()[-1], run.stderr[-1500:]
    events = _events(repo)
    # no backoff: a local refusal is final (its time is not asserted: a loaded machine makes any bound flaky)
    assert [e for e in events if e["kind"] == "model_retry"] == []
    assert [e["kind"] for e in events].count("model_error") == 1


def _agent_cases() -> list[str]:
    names = ["unpaired-surrogates", "html-body"]
    return list(CASES) if SOAK else names


@pytest.mark.parametrize("case", _agent_cases())
def test_parallel_agents_with_hostile_replies_end_cleanly(tmp_path: Path, repo: Path, case: str) -> None:
    turns, fallback = CASES[case]
    fmt = FORMATS[len(case) % 2]
    model = HostileModel(turns, fallback, plan=plan_of(2, seed=len(case)))
    run, _, env = _run_case(tmp_path, repo, fmt, model, "--split", "always", "--no-llm-merge")
    _check(repo, env, run)


@pytest.mark.parametrize("case", _agent_cases())
def test_a_planner_with_hostile_replies_ends_cleanly(tmp_path: Path, repo: Path, case: str) -> None:
    turns, fallback = CASES[case]
    fmt = FORMATS[(len(case) + 1) % 2]
    model = HostileModel([], lambda f: finish(), plan=plan_of(2, seed=len(case)), planner_turns=[*turns, fallback])
    run, _, env = _run_case(tmp_path, repo, fmt, model, "--split", "always", "--no-llm-merge")
    _check(repo, env, run)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_plan_of_a_thousand_tasks_ends_cleanly(tmp_path: Path, repo: Path, fmt: str) -> None:
    model = HostileModel([], lambda f: finish(), plan=plan_of(1000))
    run, server, env = _run_case(tmp_path, repo, fmt, model, "--split", "always", "--no-llm-merge")
    _check(repo, env, run)
    assert len(server.requests) < 50, f"{len(server.requests)} model calls for a plan past the task limit"
