"""kill -9 right after a worktree is made (its files checked out), before its agent has used it (a first attempt is
logged as started, and its agent asks its model, while its worktree is made), then again in the resumed attempt: the
task keeps its one attempt, nothing is left behind, and the run ends as the uncrashed one would.

A script named `git`, first on the PATH the real `plait` process gets, runs the real git and then, when the
command is the one aimed at (the text in the trigger file), kills plait's process group, once.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from importlib import resources
from pathlib import Path

from keyed_model import KeyedModel
from test_crash import DEMO, RUN_FLAGS, _env, _events, _finish, _git, _plait, _project

from wire_server import WireServer

_WRAPPER = """#!/bin/sh
"{git}" "$@"
code=$?
if [ -f "{trigger}" ]; then
  aim=$(cat "{trigger}")
  case " $* " in
    *"$aim"*) mv "{trigger}" "{trigger}.fired" 2>/dev/null && kill -9 -$PPID ;;
  esac
fi
exit $code
"""


def _aim(trigger: Path, command: str) -> None:
    trigger.write_text(command)


def test_a_kill_between_worktree_add_and_task_started_loses_nothing(tmp_path: Path) -> None:
    # full checkouts, as where plait may not mount: a layered worktree is killed at in test_kill_points
    env = {**_env(tmp_path), "PLAIT_LAYERED_WORKTREES": "false"}
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
    with resources.as_file(DEMO / "parallel.yaml") as script:
        model = KeyedModel(script, delay_scale=0.1)
    with WireServer(model) as server:
        _aim(trigger, "reset --hard --no-recurse-submodules")  # the last git of making a worktree
        code, _, err = _finish(
            _plait(["run", task, "--model", f"openai-compatible:demo@{server.openai_url}", *RUN_FLAGS], repo, env)
        )
        assert code == -9, err[-2000:]
        events = _events(repo)
        branches = _git(repo, "branch", "--list", "plait/*", "--format=%(refname:short)").split()
        tasks = {e["agent"] for e in events if e["kind"] == "opening"}
        used = [e for e in events if e["kind"] == "tool_result" and e["agent"] in tasks]
        assert tasks and not used, "the kill came after an agent used its worktree"
        assert [b for b in branches if not b.endswith("/integration")], "the kill came before the worktree was made"

        # the resumed process is killed again inside the attempt it resumed, at its first checkpoint
        _aim(trigger, "update-ref refs/plait/checkpoints/")
        code, _, err = _finish(_plait(["resume", "last", "--json"], repo, env))
        assert code == -9, err[-2000:]

        code, out, err = _finish(_plait(["resume", "last", "--json"], repo, env))
    assert code == 0, err[-2000:]
    events = _events(repo)
    attempts: dict[str, list[int]] = defaultdict(list)
    for e in events:
        if e["kind"] == "task_started":
            attempts[e["agent"]].append(e["attempt"])
    assert all(numbers == [1] for numbers in attempts.values()), attempts  # no attempt spent on the kills
    assert {e["agent"] for e in events if e["kind"] == "task_finished" and e["status"] == "done"} == set(attempts)
    assert len(attempts) == 4
    assert not [e for e in events if e["kind"] == "task_finished" and e["status"] in ("failed", "dropped")]
    assert _git(repo, "worktree", "list").count("\n") == 0
    assert not list((repo / ".git" / "refs" / "heads" / "plait").rglob("*.lock"))
    assert subprocess.run([real, "fsck", "--no-dangling"], cwd=repo, capture_output=True).returncode == 0
