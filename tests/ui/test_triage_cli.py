"""`plait run` first asks whether the task is one agent's: a task that is runs as one agent without a planner,
one that may split goes to the planner, and `--split always` or `--plan` skip the question."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from cli_support import Plait, git

_WHY = "One small function; nothing here splits."


def _choose(mode: str) -> dict[str, Any]:
    return {"name": "choose_mode", "arguments": {"mode": mode, "reason": _WHY}}


_EDIT = {
    "name": "edit_file",
    "arguments": {"path": "greet.py", "old": '"hello "', "new": '"hello, "'},
}
_FINISH = {"name": "finish", "arguments": {"summary": "Greets with a comma."}}
_AGENT = {
    "match": "^You are a careful software engineer",
    "name": "agent",
    "turns": [{"tool_calls": [_EDIT]}, {"tool_calls": [_FINISH]}],
}
_PLANNER = {
    "match": "You are the planner",
    "name": "planner",
    "turns": [
        {
            "tool_calls": [
                {
                    "name": "submit_plan",
                    "arguments": {
                        "mode": "single",
                        "reason": "one function",
                        "tasks": [{"id": "comma", "title": "Comma", "instructions": "", "writes": ["greet.py"]}],
                    },
                }
            ]
        }
    ],
}


def _triage(*turns: dict[str, Any]) -> dict[str, Any]:
    return {"match": "choose the mode for this task", "name": "triage", "turns": [{"tool_calls": [t]} for t in turns]}


def _script(project: Path, *conversations: dict[str, Any]) -> str:
    path = project.parent / "model.json"
    path.write_text(json.dumps({"conversations": list(conversations)}))
    return f"scripted:{path}"


def _events(project: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(project / ".git" / "plait" / "events.db")
    rows = db.execute("SELECT payload FROM events ORDER BY seq").fetchall()
    db.close()
    return [json.loads(payload) for (payload,) in rows]


def _callers(events: list[dict[str, Any]]) -> list[str]:
    """The agents that called the model, in order, once each."""
    return list(dict.fromkeys(str(e["agent"]) for e in events if e["kind"] == "model_request"))


def test_a_task_the_triage_calls_single_runs_as_one_agent_and_no_planner_is_asked(plait: Plait, project: Path) -> None:
    model = _script(project, _triage(_choose("single")), _AGENT)
    done = plait("run", "Greet with a comma", "--model", model, "--yes", "-q", "--json", cwd=project)
    assert done.code == 0, done.err
    events = _events(project)
    assert _callers(events) == ["triage", "main"]
    made = [e for e in events if e["kind"] == "plan"]
    assert len(made) == 1 and made[0]["source"] == "single" and made[0]["plan"]["reason"] == _WHY
    mode = [e for e in events if e["kind"] == "decision" and e["topic"] == "mode"]
    assert [m["reason"] for m in mode] == [_WHY]
    triage_call = next(e for e in events if e["kind"] == "model_response" and e["agent"] == "triage")
    assert (
        triage_call["response"]["usage"]["input_tokens"] < 1024
    )  # under what a provider caches: never billed as a write
    cost = plait("cost", "last", "--json", cwd=project).json()
    phases = {p["name"]: p["calls"] for p in cost["by_phase"]}
    assert phases == {"planning": 1, "work": 2}  # the triage's call is planning's, the agent's two are work
    assert "speedup" not in cost["time"] and cost["time"]["wall_s"] > 0  # one agent: no speed-up to speak of
    told = plait("cost", "last", cwd=project).out
    assert "time: " in told and "speed-up" not in told
    branch = git(project, "for-each-ref", "--format=%(refname)", "refs/heads/plait/*/main").strip()
    assert git(project, "show", f"{branch}:greet.py") == 'def greet(name):\n    return "hello, " + name'


def test_a_task_the_triage_calls_parallel_goes_to_the_planner(plait: Plait, project: Path) -> None:
    model = _script(project, _triage(_choose("parallel")), _PLANNER, _AGENT)
    done = plait("run", "Greet with a comma", "--model", model, "--yes", "-q", cwd=project)
    assert done.code == 0, done.err
    assert _callers(_events(project)) == ["triage", "planner", "main"]


def test_split_always_asks_the_planner_without_the_triage(plait: Plait, project: Path) -> None:
    model = _script(project, _PLANNER, _AGENT)  # no triage conversation: asking it would fail the run
    done = plait("run", "Greet with a comma", "--model", model, "--yes", "-q", "--split", "always", cwd=project)
    assert done.code == 0, done.err
    assert _callers(_events(project)) == ["planner", "main"]


def test_a_triage_that_never_chooses_ends_the_run_in_one_line(plait: Plait, project: Path) -> None:
    bad = {"name": "choose_mode", "arguments": {"mode": "both", "reason": "?"}}
    model = _script(project, _triage(bad, bad, bad))
    failed = plait("run", "Greet with a comma", "--model", model, "--yes", "-q", cwd=project)
    assert failed.code == 1, failed.err
    assert failed.err.strip().count("\n") == 0 and "chose no mode" in failed.err
    last = _events(project)[-1]
    assert last["kind"] == "run_finished" and last["status"] == "failed"
    assert str(last["reason"]).startswith("planning failed: ")
