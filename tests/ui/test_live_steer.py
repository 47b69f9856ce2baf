"""Steering a real run from the live view: `m` tells an agent something, `s` stops one, `o` opens a read-only shell.

The run is a real `plait run` in another process against a scripted model server; a held model call keeps
each agent running while the view acts on it, and the run then goes on with what the view wrote.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from cli_support import git
from synthetic_run import RUN_ID, append_run, parallel_run
from textual.widgets import DataTable

from plait.cli._steering import LoggedSteering
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import UserSteered
from plait.ui._live_steer import MessageScreen, StopScreen
from plait.ui.feed import EventFeed
from plait.ui.live import Dashboard
from plait.workspace import Repo
from plait.workspace.git import PLAIT_IDENTITY
from wire_server import WireServer

sys.path.insert(0, str(Path(__file__).parents[1] / "run"))  # the held run of `plait agent`'s own tests
from steer_support import Gated, env, run_argv, start, wait_for

MESSAGE = "use the existing Money type"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for key, value in PLAIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for name in ("alpha", "beta"):
        (root / f"{name}.py").write_text(f"def {name}():\n    return 0\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return Repo.discover(root)


def _to(app: Dashboard, agent: str) -> None:
    app.query_one("#agents", DataTable).move_cursor(row=app.agent_ids.index(agent))


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap for the read-only shell")
def test_the_view_tells_stops_and_opens_a_shell_on_the_agents_of_a_real_run(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "seen.txt"
    probe = tmp_path / "look.sh"
    probe.write_text(f"#!/bin/sh\npwd > {seen}\ntouch probe 2>> {seen} || echo refused >> {seen}\n")
    probe.chmod(0o755)
    monkeypatch.setenv("SHELL", str(probe))
    model, environ = Gated(("alpha", 1), ("beta", 1)), env(tmp_path)
    with WireServer(model) as server:
        proc = start(run_argv(repo, tmp_path, server.openai_url, "--json"), environ)
        try:
            model.holds["alpha", 1].wait()
            model.holds["beta", 1].wait()
            run_id = wait_for(repo, "the start", lambda e: e["kind"] == "run_started")["run_id"]
            store = SQLiteEventStore(repo.root / ".git" / "plait" / "events.db")

            async def scenario() -> None:
                app = Dashboard(EventFeed(RunLog(store, run_id)), poll_s=3600, steering=LoggedSteering())
                async with app.run_test(size=(130, 34)) as pilot:
                    await pilot.pause()
                    _to(app, "alpha")
                    await pilot.press("m")
                    assert isinstance(app.screen, MessageScreen)
                    await pilot.press(*["space" if c == " " else c for c in MESSAGE], "enter")
                    _to(app, "beta")
                    await pilot.press("s")
                    assert isinstance(app.screen, StopScreen)
                    await pilot.press("d")
                    _to(app, "alpha")
                    await pilot.press("o")
                    await pilot.pause()

            asyncio.run(scenario())
            steers = [e for e in store.events(run_id) if isinstance(e, UserSteered)]
            store.close()
            model.release_all()
            out, err = proc.communicate(timeout=300)
        finally:
            model.release_all()
    assert [(e.agent, e.action, e.text, e.retry) for e in steers] == [
        ("alpha", "say", MESSAGE, False),
        ("beta", "stop", "", False),
    ]
    (next_call,) = model.requests("alpha", 2)
    assert f"The user says: {MESSAGE}" in str(next_call["messages"])
    data = json.loads(out)
    assert data["tasks"]["alpha"]["status"] == "done"
    assert data["tasks"]["beta"]["status"] == "dropped" and "dropped by the user" in data["dropped"]["beta"]
    worktree, *said = seen.read_text().splitlines()
    assert worktree.endswith("alpha") or "alpha" in worktree
    assert "Read-only file system" in "\n".join(said) and "refused" in said
    assert not (Path(worktree) / "probe").exists()


def test_m_and_s_on_a_finished_agent_say_why_and_write_nothing(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    append_run(store, parallel_run())

    async def scenario() -> list[str]:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600, steering=LoggedSteering())
        async with app.run_test(size=(130, 34)) as pilot:
            await pilot.pause()
            _to(app, "money")
            await pilot.press("m", "s")
            await pilot.pause()
            assert len(app.screen_stack) == 1
            return [n.message for n in app._notifications]

    said = asyncio.run(scenario())
    assert said == ["task 'money' cannot be steered: the run has ended"] * 2
    assert not [e for e in store.events(RUN_ID) if isinstance(e, UserSteered)]


def test_a_view_handed_no_steering_offers_neither_m_nor_s(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    append_run(store, parallel_run())

    async def scenario() -> tuple[set[str], list[str]]:
        app = Dashboard(EventFeed(RunLog(store, RUN_ID)), poll_s=3600)
        async with app.run_test(size=(130, 34)) as pilot:
            await pilot.pause()
            _to(app, "money")
            await pilot.press("m", "s")
            await pilot.pause()
            assert len(app.screen_stack) == 1
            return {b.binding.action for b in app.active_bindings.values() if b.enabled}, [
                n.message for n in app._notifications
            ]

    offered, said = asyncio.run(scenario())
    assert "message" not in offered and "stop" not in offered and "pause" in offered
    assert said == []
