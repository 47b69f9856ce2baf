"""A user's stop wins when it is logged before the task's work is committed, whenever the agent would read it.

The agent reads the user's word before each live model call; a stop given while the call that finishes the task is
in flight, or while an attempt that fails anyway is in flight, comes after the last such read. The task's work is
handed to the merge only if no stop came before its commit, and a stop that drops the task holds for every later
attempt of it, a resumed run's too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from integrators import git
from steer_support import Gated, agent_of, env, events, kill, plait, run_argv, start, turn_of, wait_for

from plait.workspace import Repo
from wire_server import WireServer


def _run_with_a_stop(repo: Repo, tmp_path: Path, model: Gated, hold: tuple[str, int], *flags: str) -> dict[str, Any]:
    """A run whose agent beta is stopped (with `flags`) while its model call `hold` is in flight; its JSON report."""
    environ = env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url, "--json"), environ)
        try:
            model.holds[hold].wait()
            assert plait(repo, environ, "agent", "last", "beta", *flags).returncode == 0
            model.release_all()
            out, err = proc.communicate(timeout=300)
        finally:
            model.release_all()
    assert out, err[-2000:]
    report: dict[str, Any] = json.loads(out)
    return report


def _integrated(repo: Repo, report: dict[str, Any], path: str) -> str:
    return git(repo.root, "show", f"{report['branch']}:{path}")


def test_a_stop_given_while_the_finishing_call_is_in_flight_drops_the_task(repo: Repo, tmp_path: Path) -> None:
    model = Gated(("beta", 2))  # the call whose reply calls finish
    report = _run_with_a_stop(repo, tmp_path, model, ("beta", 2), "--stop")
    assert report["tasks"]["alpha"]["status"] == "done"
    assert report["tasks"]["beta"]["status"] == "dropped", report["tasks"]["beta"]
    assert "dropped by the user" in report["dropped"]["beta"]
    assert "return 1" in _integrated(repo, report, "alpha.py")
    assert "return 0" in _integrated(repo, report, "beta.py")  # its work was not merged
    finished = [e for e in events(repo) if e["kind"] == "task_finished" and e["agent"] == "beta"]
    assert [e["status"] for e in finished] == ["failed", "dropped"]


def test_a_stop_to_try_again_given_while_the_finishing_call_is_in_flight_tries_again(
    repo: Repo, tmp_path: Path
) -> None:
    model = Gated(("beta", 2))
    report = _run_with_a_stop(repo, tmp_path, model, ("beta", 2), "--retry")
    assert report["tasks"]["beta"]["status"] == "done"
    assert report["tasks"]["beta"]["attempts"] == 2


class _FailsOnce(Gated):
    """Gated, but beta's held call fails once released (an error the model client does not retry)."""

    def __init__(self) -> None:
        super().__init__(("beta", 1))
        self.failed = False

    def __call__(self, fmt: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = super().__call__(fmt, body)
        if agent_of(body) == "beta" and turn_of(body) == 1 and not self.failed:
            self.failed = True
            return {"status": 400, "message": "the request is malformed"}
        return reply


def test_a_stop_given_during_an_attempt_that_then_fails_is_not_forgotten_by_its_retry(
    repo: Repo, tmp_path: Path
) -> None:
    model = _FailsOnce()
    report = _run_with_a_stop(repo, tmp_path, model, ("beta", 1), "--stop")
    assert report["tasks"]["beta"]["status"] == "dropped", report["tasks"]["beta"]
    assert "dropped by the user" in report["dropped"]["beta"]
    assert len(model.requests("beta", 0)) == 1  # the second attempt asked nothing
    assert "return 0" in _integrated(repo, report, "beta.py")


def test_a_task_the_user_dropped_before_a_crash_stays_dropped_when_resumed(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("alpha", 1), ("beta", 1)), env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url), environ)
        try:
            model.holds["alpha", 1].wait()  # held until the resume: the run cannot end before its kill
            model.holds["beta", 1].wait()
            assert plait(repo, environ, "agent", "last", "beta", "--stop").returncode == 0
            model.holds["beta", 1].release()
            wait_for(repo, "beta's end", lambda e: e["kind"] == "task_finished" and e["agent"] == "beta")
            kill(proc)
            model.release_all()
            resumed = plait(repo, environ, "resume", "last", "--json")
        finally:
            model.release_all()
    assert resumed.stdout, resumed.stderr[-2000:]
    report = json.loads(resumed.stdout)
    assert report["tasks"]["alpha"]["status"] == "done"
    assert report["tasks"]["beta"]["status"] == "dropped", report["tasks"]["beta"]
    assert len(model.requests("beta", 0)) == 1  # the resumed run asked nothing for it
    assert "return 0" in _integrated(repo, report, "beta.py")
