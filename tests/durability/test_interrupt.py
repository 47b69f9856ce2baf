"""Ctrl-C stops a run, says how to resume, leaves it resumable, and `plait resume` finishes it."""

from __future__ import annotations

import signal
import subprocess
import time
from importlib import resources
from pathlib import Path

from keyed_model import KeyedModel
from test_crash import DEMO, _env, _events, _events_so_far, _finish, _integration_tree, _plait, _project

from wire_server import WireServer


def test_ctrl_c_stops_promptly_and_the_run_resumes_to_the_end(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = _project(tmp_path / "repo", env)
    task = (DEMO / "parallel_task.txt").read_text().strip()
    with resources.as_file(DEMO / "parallel.yaml") as script:
        model = KeyedModel(script, delay_scale=1.0)
    with WireServer(model) as server:
        spec = f"openai-compatible:demo@{server.openai_url}"
        proc = _plait(["run", task, "--model", spec, "--yes", "--no-llm-merge", "--split", "always"], repo, env)
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline and not _agents_at_work(repo):
                time.sleep(0.1)
        except BaseException:
            proc.kill()  # a failure while waiting leaves no run behind for the next test to trip over
            proc.communicate()
            raise
        proc.send_signal(signal.SIGINT)
        code, out, err = _finish(proc)  # how fast it stops is a figure for a benchmark, not for this test
        assert code == 130 and "plait resume" in err, err[-1500:]
        kinds = [e["kind"] for e in _events(repo)]
        last = _events(repo)[-1]
        assert kinds[-1] == "run_finished" and last["status"] == "interrupted"
        code, out, err = _finish(_plait(["resume", "last", "--json"], repo, env))
        assert code == 0, err[-1500:]
    assert _integration_tree(repo)
    assert subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout.count("\n") == 1


def _agents_at_work(repo: Path) -> bool:
    """True once a task agent (not the planner) has finished a tool call."""
    return any(e["kind"] == "tool_result" and e["agent"] != "planner" for e in _events_so_far(repo))
