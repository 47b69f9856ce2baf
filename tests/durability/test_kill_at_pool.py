"""kill -9 while a worktree handed back to the run's pool is being recycled for the next attempt: the resumed run
makes that attempt's worktree again, keeps one attempt per task, and leaves no worktree, pooled or not, behind.

As in `test_kill_at_worktree`, a script named `git` first on the PATH kills plait's process group once, right
after the recycling's `read-tree`; one agent at a time makes every attempt after the first recycle a worktree.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from importlib import resources
from pathlib import Path

from keyed_model import KeyedModel
from test_crash import DEMO, RUN_FLAGS, _env, _events, _finish, _git, _plait, _project
from test_kill_at_worktree import _WRAPPER

from wire_server import WireServer


def test_a_kill_while_recycling_a_pooled_worktree_loses_nothing(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = _project(tmp_path / "repo", env)
    real = shutil.which("git")
    assert real is not None
    bin_dir, trigger = tmp_path / "bin", tmp_path / "kill-at"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(_WRAPPER.format(git=real, trigger=trigger))
    wrapper.chmod(0o755)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    task = (DEMO / "parallel_task.txt").read_text().strip()
    flags = [*RUN_FLAGS, "--concurrency", "1"]
    with resources.as_file(DEMO / "parallel.yaml") as script:
        model = KeyedModel(script, delay_scale=0.1)
    with WireServer(model) as server:
        trigger.write_text("read-tree --reset -u")
        code, _, err = _finish(
            _plait(["run", task, "--model", f"openai-compatible:demo@{server.openai_url}", *flags], repo, env)
        )
        assert code == -9, err[-2000:]
        assert (tmp_path / "kill-at.fired").exists()
        code, _, err = _finish(_plait(["resume", "last", "--json"], repo, env))
    assert code == 0, err[-2000:]
    events = _events(repo)
    attempts: dict[str, list[int]] = defaultdict(list)
    for e in events:
        if e["kind"] == "task_started":
            attempts[e["agent"]].append(e["attempt"])
    assert all(numbers == [1] for numbers in attempts.values()), attempts
    assert len(attempts) == 4
    assert {e["agent"] for e in events if e["kind"] == "task_finished" and e["status"] == "done"} == set(attempts)
    assert _git(repo, "worktree", "list").count("\n") == 0
    assert not list((repo / ".git" / "worktrees").glob("*"))
    assert not list((repo / ".git" / "plait" / "worktrees").rglob(".pool-*"))
    assert subprocess.run([real, "fsck", "--no-dangling"], cwd=repo, capture_output=True).returncode == 0
