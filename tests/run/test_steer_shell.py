"""`plait agent RUN TASK --shell` sees a running task's worktree read-only; `plait run --detach` returns at once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from steer_support import Gated, env, events, plait, run_argv, start

from plait.workspace import Repo
from wire_server import WireServer


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_shell_in_a_running_tasks_worktree_cannot_write(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("alpha", 1)), env(tmp_path, SHELL="/bin/sh")
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url), environ)
        try:
            model.holds["alpha", 1].wait()
            touched = plait(repo, environ, "agent", "last", "alpha", "--shell", "--", "touch", "x")
            looked = plait(repo, environ, "agent", "last", "alpha", "--shell", "--", "cat", "alpha.py")
            model.release_all()
            out, err = proc.communicate(timeout=300)
        finally:
            model.release_all()
    assert touched.returncode != 0
    assert "Read-only file system" in touched.stderr
    assert looked.returncode == 0 and "def alpha" in looked.stdout
    worktree = next(e["worktree"] for e in events(repo) if e["kind"] == "task_started" and e["agent"] == "alpha")
    assert not (Path(worktree) / "x").exists()
    assert proc.returncode == 0, err[-2000:]


def test_a_detached_run_returns_at_once_and_finishes_in_the_background(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("alpha", 0)), env(tmp_path)
    with WireServer(model) as server:
        try:
            argv = run_argv(repo, tmp_path, server.openai_url, "--detach")
            detached = plait(repo, environ, *argv[argv.index("run") : argv.index("-C")])
            assert detached.returncode == 0, detached.stderr
            model.holds["alpha", 0].wait()
            assert not any(e["kind"] == "run_finished" for e in events(repo))  # alpha's first call is still held
            run_id = detached.stdout.split()[1]
            assert f"plait attach {run_id}" in detached.stdout and f"plait log {run_id} -f" in detached.stdout
            model.release_all()
            attached = plait(repo, environ, "attach", run_id)
            followed = plait(repo, environ, "log", run_id, "-f")
        finally:
            model.release_all()
    assert attached.returncode == 0, attached.stderr
    assert "done" in attached.stderr + attached.stdout, "attach follows the run's progress lines to its end"
    assert followed.returncode == 0
    (finished,) = [e for e in events(repo) if e["kind"] == "run_finished"]
    assert finished["run_id"] == run_id and finished["status"] == "done"
    assert "done" in (repo.root / ".git" / "plait" / "logs" / f"{run_id}.log").read_text()
