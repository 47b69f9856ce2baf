"""`plait session`: a lead the user talks with, helpers that last, kill -9 and --resume, and a dispatched change."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

from integrators import git

from plait.events import RunDispatched, RunFinished, SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.run.base import RunBase
from plait.run.session import Session, SessionConfig
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

LEAD = "You are the lead of an interactive plait session"
FIRST = "A storage helper now watches store.py: save() writes JSON (store.py:2)."
SECOND = "No lock: save() opens store.py's file plainly (store.py:2), the storage helper says."


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def _script() -> dict[str, Any]:
    lead = [
        _call("spawn_helper", name="storage", area=["store.py"], brief="Saving and loading."),
        {"expect": "helper `storage` is ready", **_call("ask_expert", expert="storage", question="How is data saved?")},
        {"expect": "json.dump", **_call("answer", answer=FIRST)},
        _call("ask_expert", expert="storage", question="Does save() lock the file?"),
        {"expect": "no lock is taken", **_call("answer", answer=SECOND)},
    ]
    helper = [
        _call("read_file", path="store.py"),
        {"expect": "json.dump", **_call("answer", answer="save() writes JSON with json.dump (store.py:2)")},
        _call("answer", answer="no lock is taken: store.py:2 opens the file plainly"),
    ]
    return {
        "conversations": [
            {"name": "lead", "match": LEAD, "turns": lead},
            {"name": "storage", "match": "You are `storage`", "turns": helper},
        ]
    }


def _env(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "COLUMNS": "200",
    }


class _Lines:
    """The lines a process writes, read on a thread so a test can wait for one without blocking forever."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def until(self, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.seen):
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {text!r} in time; got {self.seen}") from None
            if line is None:
                raise AssertionError(f"the process ended before {text!r}; got {self.seen}")
            self.seen.append(line)


def _session(repo: Path, env: dict[str, str], err: Path, *args: str) -> subprocess.Popen[str]:
    with err.open("w") as stderr:  # the child keeps its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "plait", "session", *args, "-C", str(repo)],
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
        )


def _rows(repo: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(repo / ".git" / "plait" / "events.db")
    rows = db.execute("SELECT payload FROM events ORDER BY seq").fetchall()
    db.close()
    return [json.loads(payload) for (payload,) in rows]


def _wait_for(path: Path, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text():
        assert time.monotonic() < deadline, f"no {text!r} in {path.read_text()!r}"
        time.sleep(0.05)


def test_a_session_survives_kill_9_with_its_helpers_intact(repo: Repo, tmp_path: Path) -> None:
    (repo.root / "store.py").write_text("import json\ndef save(data, path):\n    json.dump(data, open(path, 'w'))\n")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "store")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(_script()))
    env = _env(tmp_path)

    first = _session(repo.root, env, tmp_path / "first.err", "--model", f"scripted:{script}")
    out = _Lines(first.stdout)  # type: ignore[arg-type]
    assert first.stdin is not None
    first.stdin.write("Make a helper for storage and ask it how data is saved.\n")
    first.stdin.flush()
    out.until(FIRST)  # the turn is over, its reply logged and shown
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate()
    before = _rows(repo.root)
    session = next(r["run_id"] for r in before if r["kind"] == "run_kind")
    assert not any(r["kind"] == "run_finished" for r in before)  # it died without a word

    err = tmp_path / "second.err"
    second = _session(repo.root, env, err, "--resume", session)
    _wait_for(err, "resumed at message 2, 1 helper(s)")
    # while it is open, a second resume of the same session is refused in one line
    refused = subprocess.run(
        [sys.executable, "-m", "plait", "session", "--resume", session, "-C", str(repo.root)],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 5 and refused.stderr.strip().count("\n") == 0
    assert f"session {session} is open in another plait process" in refused.stderr
    stdout, _ = second.communicate("Does it lock the file?\n/helpers\n/quit\n", timeout=120)
    assert second.returncode == 0, err.read_text()
    assert SECOND in stdout and "storage" in stdout.split(SECOND)[1]  # the reply, then /helpers lists it

    rows = [r for r in _rows(repo.root) if r["run_id"] == session]
    # no model call answered before the kill was made again
    started = Counter((r["agent"], r["call"]) for r in rows if r["kind"] == "model_request")
    assert started == Counter({("lead", n): 1 for n in range(1, 6)} | {("expert:storage", n): 1 for n in (1, 2, 3)})
    # the helper's new request carried its whole earlier conversation: question, read, answer, and the new question
    third = next(r for r in rows if r["kind"] == "model_request" and r["agent"] == "expert:storage" and r["call"] == 3)
    assert third["messages"] == 6
    messages = [r["text"] for r in rows if r["kind"] == "user_said" and r["topic"] == "session"]
    assert messages == ["Make a helper for storage and ask it how data is saved.", "Does it lock the file?"]
    assert [r["text"] for r in rows if r["kind"] == "lead_replied"] == [FIRST, SECOND]
    assert rows[-1]["kind"] == "run_finished" and rows[-1]["status"] == "done"
    assert git(repo.root, "worktree", "list").count("\n") == 0  # the session's checkout is gone


def _edit_task(name: str, value: int) -> dict[str, Any]:
    return {
        "name": name,
        "match": f"Your task is `{name}`",
        "turns": [
            _call("edit_file", path=f"{name}.py", old="return 0", new=f"return {value}"),
            _call("finish", summary=f"{name} returns {value}"),
        ],
    }


def test_a_session_dispatches_a_change_through_the_pipeline(repo: Repo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "tasks:\n"
        "  - {id: alpha, title: alpha returns 1, instructions: Make alpha return 1., writes: [alpha.py]}\n"
        "  - {id: beta, title: beta returns 2, instructions: Make beta return 2., writes: [beta.py]}\n"
    )
    lead = [
        _call("dispatch", task="Make alpha return 1 and beta return 2.", plan_file=str(plan)),
        {"expect": "tests: passed", **_call("answer", answer="Done: both changes are merged and tested.")},
    ]
    model = ScriptedModel(
        conversations=[{"name": "lead", "match": LEAD, "turns": lead}, _edit_task("alpha", 1), _edit_task("beta", 2)]
    )
    check = "python3 -c 'import alpha, beta; assert (alpha.alpha(), beta.beta()) == (1, 2)'"
    settings = Settings(verify_command=check, radar_interval=0, concurrency=2)
    store = SQLiteEventStore(tmp_path / "events.db")

    def runners(log: RunLog) -> Any:
        return lambda path, agent, env: LocalShell()

    session = Session(SessionConfig(repo, settings, model, RunLog(store, "s1"), runners, RunBase(repo.head(), "main")))

    async def talk() -> str:
        await session.open()
        reply = await session.say("Make alpha return 1 and beta return 2; here is the plan.")
        await session.close()
        return reply.text

    assert asyncio.run(talk()) == "Done: both changes are merged and tested."
    model.assert_complete()
    # a session's lead asks its investigators and its helpers alike
    ask_expert = next(t for r in model.calls if LEAD in r.system for t in r.tools if t.name == "ask_expert")
    assert "investigators or helpers" in ask_expert.description and "spawn_helper" in ask_expert.description
    dispatched = [e for e in store.events("s1", kinds=["dispatched"]) if isinstance(e, RunDispatched)]
    assert len(dispatched) == 1
    run_id = dispatched[0].run
    assert session.dispatched() == {dispatched[0].key: run_id}
    # the change is a run of its own: both tasks ran, were merged, and the gate's tests passed on the result
    finished = [e for e in store.events(run_id) if isinstance(e, RunFinished)]
    assert finished[-1].status == "done" and finished[-1].branch == f"plait/{run_id}/integration"
    assert "return 1" in git(repo.root, "show", f"{finished[-1].branch}:alpha.py")
    assert "return 2" in git(repo.root, "show", f"{finished[-1].branch}:beta.py")
    results = store.events("s1", agent="lead", kinds=["tool_result"])
    told = next(e.output for e in results if isinstance(e, ToolReturned) and e.name == "dispatch")
    assert f"result: branch plait/{run_id}/integration" in told
    assert git(repo.root, "status", "--porcelain") == "" and git(repo.root, "branch", "--show-current") == "main"
    store.close()
