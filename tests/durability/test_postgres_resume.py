"""A run with its log in PostgreSQL: killed with kill -9 while its agent works, then resumed to the end.

Nothing answered is paid again, the other commands read the run from the server, no SQLite log is made, and
the password in the store's URL is in nothing they print nor in the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from keyed_model import KeyedModel
from test_crash import MARK, _env, _finish, _git, _kill, _plait

from pg_cluster import PASSWORD, PostgresServer
from plait.events import ModelCallFinished, PostgresEventStore, RunStarted
from plait.redact import REDACTED
from wire_server import WireServer

TASK = "Add a farewell module next to greet"
SCRIPT = """
conversations:
  - name: main
    match: Add a farewell module
    turns:
      - text: Reading greet.
        delay: 0.5
        tool_calls: [{name: read_file, arguments: {path: greet.py}}]
      - text: Writing farewell.
        delay: 0.5
        tool_calls:
          - name: write_file
            arguments: {path: farewell.py, content: "def bye(name):\\n    return 'bye ' + name\\n"}
      - text: Trying it.
        delay: 0.5
        tool_calls:
          - name: run
            arguments: {command: "python3 -c 'import farewell; print(farewell.bye(\\"ann\\"))'"}
      - delay: 0.5
        tool_calls: [{name: finish, arguments: {summary: farewell.bye says goodbye}}]
"""
"""The agent's four turns, played by a `KeyedModel` that counts what it answered."""


def _repo(where: Path, env: dict[str, str]) -> Path:
    where.mkdir()
    (where / "greet.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "greet"]):
        subprocess.run(["git", *args], cwd=where, env=env, check=True, capture_output=True)
    return where


def _working(url: str) -> bool:
    """True once the agent has an answered model call and a tool result in the log."""
    store = PostgresEventStore(url)
    try:
        runs = store.run_ids()
        events = store.events(runs[-1], agent="main", kinds=["model_response", "tool_result"]) if runs else []
    finally:
        store.close()
    return {e.kind for e in events} == {"model_response", "tool_result"}


def _cli(args: list[str], repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "plait", *args, "-C", str(repo)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_a_run_logged_in_postgresql_survives_kill_9_and_resumes_without_paying_again(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.database()
    env = {**_env(tmp_path), "PLAIT_STORE": url}
    repo = _repo(tmp_path / "repo", env)
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    model = KeyedModel(script)
    with WireServer(model) as server:
        spec = f"openai-compatible:demo@{server.openai_url}"
        proc = _plait(["run", TASK, "--single", "--model", spec, "--yes", "--json"], repo, env)
        deadline = time.monotonic() + 90
        while not _working(url):
            if proc.poll() is not None:
                pytest.fail(f"the run ended before the kill: {proc.communicate()[1][-2000:]}")
            if time.monotonic() > deadline:
                _kill(proc)
                pytest.fail("the agent did not get to work within 90 s")
            time.sleep(0.05)
        _kill(proc)
        code, out, err = _finish(_plait(["resume", "last", "--json"], repo, env))
        assert code == 0, err[-2000:]
        assert "took over run" in err  # the lease of the killed process, which the server let go

    assert not (repo / ".git" / "plait" / "events.db").exists()
    result = json.loads(out)
    assert result["status"] == "done" and "bye" in _git(repo, "show", f"{result['branch']}:farewell.py")
    store = PostgresEventStore(url)
    (run_id,) = store.run_ids()
    events = store.events(run_id)
    store.close()
    logged: dict[tuple[int, int], int] = {}
    for e in events:
        if isinstance(e, ModelCallFinished):
            assert (e.attempt, e.call) not in logged, f"model call {e.call} logged twice"
            marker = MARK.search(e.response.text)
            assert marker, e.response.text
            logged[(e.attempt, e.call)] = int(marker.group(1))
    answers = {turn: served for (_, turn), served in model.answers.items()}
    assert len(logged) == 4 and sorted(answers) == [0, 1, 2, 3]
    for turn, served in answers.items():  # the answer the log kept is the last the server gave: none paid again
        assert served[-1] in logged.values(), f"turn {turn} was answered again after its answer was logged"
    assert sum(len(served) - 1 for served in answers.values()) <= 1  # only a call in flight at the kill
    started = events[0]
    assert isinstance(started, RunStarted) and started.settings["store"] == url.replace(PASSWORD, REDACTED)

    shown = [_cli(args, repo, env) for args in (["show", run_id], ["cost", run_id, "--json"], ["runs", "--json"])]
    shown += [_cli(["log", run_id, "--follow"], repo, env), _cli(["doctor"], repo, env)]
    shown += [_cli(["status", run_id, "--json"], repo, env)]
    assert [r.returncode for r in shown] == [0] * 6, [r.stderr[-500:] for r in shown]
    assert "farewell.bye says goodbye" in shown[0].stdout and json.loads(shown[1].stdout)["run_id"] == run_id
    assert [r["run_id"] for r in json.loads(shown[2].stdout)] == [run_id]
    assert "run_finished" in shown[3].stdout or "finished" in shown[3].stdout
    assert "all good" in shown[4].stdout and json.loads(shown[5].stdout)["status"] == "done"
    with psycopg.connect(url) as conn:
        payloads = "".join(str(row[0]) for row in conn.execute("SELECT payload FROM plait_events"))
    assert PASSWORD not in out + err + "".join(r.stdout + r.stderr for r in shown) + payloads
