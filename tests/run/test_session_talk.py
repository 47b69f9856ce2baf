"""What a session's lead is told about a dispatched change, and what the user sees after each message."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from integrators import git

from plait.events import SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.run.base import RunBase
from plait.run.session import Session, SessionConfig
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

LEAD = "You are the lead of an interactive plait session"


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def test_a_dispatched_change_comes_back_with_its_files_diff_and_test_count(repo: Repo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "tasks:\n  - {id: alpha, title: alpha returns 1, instructions: Make alpha return 1., writes: [alpha.py]}\n"
    )
    lead = [
        _call("dispatch", task="Make alpha return 1.", plan_file=str(plan)),
        _call("answer", answer="Done."),
    ]
    alpha = [
        _call("edit_file", path="alpha.py", old="return 0", new="return 1"),
        _call("finish", summary="alpha now returns 1"),
    ]
    model = ScriptedModel(
        conversations=[
            {"name": "lead", "match": LEAD, "turns": lead},
            {"name": "alpha", "match": "\nYour task", "turns": alpha},
        ]
    )
    check = "python3 -c 'import alpha; assert alpha.alpha() == 1; print(\"3 passed in 0.01s\")'"
    settings = Settings(verify_command=check, radar_interval=0)
    store = SQLiteEventStore(tmp_path / "events.db")

    def runners(log: RunLog) -> Any:
        return lambda path, agent, env: LocalShell()

    session = Session(SessionConfig(repo, settings, model, RunLog(store, "s1"), runners, RunBase(repo.head(), "main")))

    async def talk() -> None:
        await session.open()
        await session.say("Make alpha return 1.")
        await session.close()

    asyncio.run(talk())
    model.assert_complete()
    results = store.events("s1", agent="lead", kinds=["tool_result"])
    told = next(e.output for e in results if isinstance(e, ToolReturned) and e.name == "dispatch")
    # the lead cannot run git: it is given the files, the diff and the tasks' own words, not a command to run
    assert "files changed: alpha.py (+1 -1)" in told
    assert "-    return 0\n+    return 1" in told
    assert "task main: done: alpha now returns 1" in told
    # the tests' own verdict, not only the command
    assert "tests: passed: python3 -c" in told and "(3 passed in 0.01s)" in told
    # what it reads is still the session's start: said with the result and in its prompt
    assert "not in it until the user applies it" in told
    request = next(r for r in model.calls if LEAD in r.system)
    assert "as of the commit the session started from" in request.system
    dispatch = next(t for t in request.tools if t.name == "dispatch")
    assert "planned into parallel tasks" not in dispatch.description and "one agent" in dispatch.description
    store.close()


def test_the_user_sees_each_message_cost_unwrapped_lines_and_investigators_named_so(repo: Repo, tmp_path: Path) -> None:
    question = "Which of alpha, beta and gamma returns what, and is any of them called anywhere in this project?"
    lead = [
        _call(
            "investigate",
            question=question,
            areas=[{"name": "alpha", "paths": ["alpha.py"], "question": "What does alpha() return, and who calls it?"}],
        ),
        _call("answer", answer="alpha() returns 0 (alpha.py:2); nothing calls it."),
    ]
    investigator = [
        _call("answer", answer="alpha() returns 0 (alpha.py:2).", references=["alpha.py:2"], not_checked="nothing"),
    ]
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "conversations": [
                    {"name": "lead", "match": LEAD, "turns": lead},
                    {"name": "alpha", "match": "You are `alpha`", "turns": investigator},
                ]
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [sys.executable, "-m", "plait", "session", "--model", f"scripted:{script}", "-C", str(repo.root)],
        env={**env, "COLUMNS": "60"},
        input=f"{question}\n/helpers\n/quit\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # what the message cost: the lead's two calls and the investigator's one
    assert "3 model calls, cost unknown (the model has no price)" in done.stdout
    # the investigator is listed as one, not by the name of the run kind
    helpers = done.stdout.split("alpha() returns 0 (alpha.py:2); nothing calls it.")[1]
    assert "investigator" in helpers and "investigation" not in helpers
    # a line the user copies (the command that resumes) is never broken at the terminal's width
    session = next(line for line in done.stderr.splitlines() if " saved: " in line).split()[1]
    assert f"`plait session --resume {session}` continues it" in done.stderr
    assert "asked by lead: What does alpha() return, and who calls it?" in done.stderr
    assert git(repo.root, "status", "--porcelain") == ""
