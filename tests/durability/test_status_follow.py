"""`plait status --follow` from a second process, on a run logged in PostgreSQL: told of each change, not polling."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from test_crash import _env, _finish, _plait

from pg_cluster import PostgresServer
from plait.events import PostgresEventStore

SCRIPT = """
turns:
  - text: Reading.
    delay: 1.0
    tool_calls: [{name: read_file, arguments: {path: greet.py}}]
  - text: Writing.
    delay: 1.0
    tool_calls:
      - name: write_file
        arguments: {path: farewell.py, content: "def bye():\\n    return 'bye'\\n"}
  - delay: 1.0
    tool_calls: [{name: finish, arguments: {summary: bye is there}}]
"""


def _repo(where: Path, env: dict[str, str]) -> Path:
    where.mkdir()
    (where / "greet.py").write_text("def greet():\n    return 'hi'\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "greet"]):
        subprocess.run(["git", *args], cwd=where, env=env, check=True, capture_output=True)
    return where


def test_status_follow_prints_each_change_as_the_server_tells_and_stops_at_the_end(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.database()
    env = {**_env(tmp_path), "PLAIT_STORE": url}
    repo = _repo(tmp_path / "repo", env)
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    run = _plait(["run", "Add a farewell", "--single", "--model", f"scripted:{script}", "--yes", "--json"], repo, env)
    deadline = time.monotonic() + 60
    while True:
        store = PostgresEventStore(url)
        runs = store.run_ids()
        store.close()
        if runs or time.monotonic() > deadline or run.poll() is not None:
            break
        time.sleep(0.05)
    assert runs, "the run did not start"
    # an interval of ten minutes: only the server's notifications can bring the changes in time
    follower = subprocess.Popen(
        [sys.executable, "-m", "plait", "status", runs[0], "--follow", "--json", "--interval", "600", "-C", str(repo)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    code, _, err = _finish(run)
    ended = time.monotonic()
    out, ferr = follower.communicate(timeout=120)
    assert code == 0, err[-2000:]
    assert follower.returncode == 0, ferr[-2000:]
    assert time.monotonic() - ended < 60  # it stopped when the run ended, not at its next poll
    states = [json.loads(line) for line in out.splitlines()]
    assert len(states) >= 3 and states[-1]["status"] == "done"
    steps = [next(iter(s["agents"]), {}).get("steps", 0) if s["agents"] else 0 for s in states]
    assert steps == sorted(steps) and steps[-1] > steps[0]  # it saw the agent's work go on
