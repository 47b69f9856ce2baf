"""`plait agent RUN TASK` steps into one agent of a real `plait run` in another process: say, pause, stop."""

from __future__ import annotations

import json
from pathlib import Path

from steer_support import Gated, env, events, kill, plait, run_argv, start, wait_for

from plait.workspace import Repo
from wire_server import WireServer

MESSAGE = "use the existing Money type"


def test_a_message_reaches_the_agent_at_its_next_model_call(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("alpha", 1)), env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url), environ)
        try:
            model.holds["alpha", 1].wait()
            told = plait(repo, environ, "agent", "last", "alpha", "--say", MESSAGE)
            assert told.returncode == 0, told.stderr
            model.release_all()
            out, err = proc.communicate(timeout=300)
        finally:
            model.release_all()
    assert proc.returncode == 0, err[-2000:]
    assert all(MESSAGE not in str(body) for body in model.requests("alpha", 1))
    (next_call,) = model.requests("alpha", 2)
    assert f"The user says: {MESSAGE}" in str(next_call["messages"])
    assert all(MESSAGE not in str(body) for body in model.requests("beta", 2))


def test_a_message_is_asked_again_by_the_agent_resumed_after_a_crash(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("alpha", 1), ("alpha", 2)), env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url), environ)
        try:
            model.holds["alpha", 1].wait()
            assert plait(repo, environ, "agent", "last", "alpha", "--say", MESSAGE).returncode == 0
            model.holds["alpha", 1].release()
            model.holds["alpha", 2].wait()  # the call that carries the message is in flight: the process dies
            kill(proc)
            model.release_all()
            resumed = plait(repo, environ, "resume", "last")
        finally:
            model.release_all()
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    asked = model.requests("alpha", 2)
    assert len(asked) == 2
    assert all(str(body["messages"]).count(MESSAGE) == 1 for body in asked)


def test_a_paused_agent_makes_no_model_call_until_resumed_while_the_others_go_on(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("alpha", 1), ("beta", 0)), env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url), environ)
        try:
            model.holds["alpha", 1].wait()
            assert plait(repo, environ, "agent", "last", "alpha", "--pause").returncode == 0
            model.holds["alpha", 1].release()  # the step in flight ends, then the agent waits
            paused = wait_for(repo, "the pause", lambda e: e["kind"] == "decision" and e["topic"] == "steer")
            status = json.loads(plait(repo, environ, "status", "last", "--json").stdout)
            assert {a["id"]: a["state"] for a in status["agents"]}["alpha"] == "paused"
            model.holds["beta", 0].release()
            wait_for(repo, "beta's end", lambda e: e["kind"] == "task_finished" and e["agent"] == "beta")
            assert plait(repo, environ, "agent", "last", "alpha", "--resume").returncode == 0
            out, err = proc.communicate(timeout=300)
        finally:
            model.release_all()
    assert proc.returncode == 0, err[-2000:]
    log = events(repo)
    resumed = next(e["seq"] for e in log if e["kind"] == "steer" and e["action"] == "resume")
    calls = [e["seq"] for e in log if e["kind"] == "model_request" and e["agent"] == "alpha"]
    assert not [seq for seq in calls if paused["seq"] < seq < resumed]
    assert [seq for seq in calls if seq > resumed]
    assert len(model.requests("alpha", 2)) == 1


def test_a_stopped_agent_drops_its_task_and_the_run_goes_on_then_exits_non_zero(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("beta", 1)), env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url, "--json"), environ)
        try:
            model.holds["beta", 1].wait()
            assert plait(repo, environ, "agent", "last", "beta", "--stop").returncode == 0
            model.release_all()
            out, err = proc.communicate(timeout=300)
        finally:
            model.release_all()
    assert proc.returncode == 1, err[-2000:]
    data = json.loads(out)
    assert data["tasks"]["alpha"]["status"] == "done"
    assert data["tasks"]["beta"] == {"status": "dropped", "attempts": 1, "reason": data["dropped"]["beta"]}
    assert "dropped by the user" in data["dropped"]["beta"]
    assert not model.requests("beta", 2)
    stopped = [e for e in events(repo) if e["kind"] == "agent_stopped" and e["agent"] == "beta"]
    assert [e["reason"] for e in stopped] == ["stopped_by_user"]


def test_a_stopped_agent_told_to_retry_tries_its_task_again(repo: Repo, tmp_path: Path) -> None:
    model, environ = Gated(("beta", 1)), env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url, "--json"), environ)
        try:
            model.holds["beta", 1].wait()
            assert plait(repo, environ, "agent", "last", "beta", "--retry").returncode == 0
            model.release_all()
            out, err = proc.communicate(timeout=300)
        finally:
            model.release_all()
    assert proc.returncode == 0, err[-2000:]
    assert json.loads(out)["tasks"]["beta"]["attempts"] == 2
