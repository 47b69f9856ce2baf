"""A run whose planning fails ends there, logged as failed, and `plait resume` does not plan (and pay) again."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from cli_support import Plait, git

_EMPTY = '{name: submit_plan, arguments: {mode: parallel, reason: "split it", tasks: []}}'
_SCRIPT = f"""\
conversations:
  - match: "choose the mode for this task"
    name: triage
    turns:
      - tool_calls: [{{name: choose_mode, arguments: {{mode: parallel, reason: "two functions apart"}}}}]
  - match: "You are the planner"
    name: planner
    turns:
      - tool_calls: [{_EMPTY}]
      - tool_calls: [{_EMPTY}]
      - tool_calls: [{_EMPTY}]
"""


def _events(project: Path) -> list[dict[str, object]]:
    db = sqlite3.connect(project / ".git" / "plait" / "events.db")
    rows = db.execute("SELECT payload FROM events ORDER BY seq").fetchall()
    db.close()
    return [json.loads(payload) for (payload,) in rows]


def test_a_planner_out_of_attempts_ends_the_run_and_resume_does_not_plan_again(plait: Plait, project: Path) -> None:
    script = project.parent / "planner.yaml"
    script.write_text(_SCRIPT)
    failed = plait("run", "Split greet in two", "--model", f"scripted:{script}", "--yes", "-q", cwd=project)
    assert failed.code == 1, failed.err
    assert failed.err.strip().count("\n") == 0 and "the planner submitted 3 invalid plans" in failed.err
    events = _events(project)
    last = events[-1]
    assert last["kind"] == "run_finished" and last["status"] == "failed"
    assert str(last["reason"]).startswith("planning failed: the planner submitted 3 invalid plans")

    resumed = plait("resume", "last", cwd=project)
    assert resumed.code == 0, resumed.err
    assert "ended in planning failure" in resumed.out and "plait run" in resumed.out
    assert _events(project) == events  # no model call, nothing logged: the planner did not start again
    listed = plait("runs", "--json", cwd=project).json()
    assert [r["status"] for r in listed] == ["failed"]
    assert git(project, "worktree", "list").count("\n") == 0


def test_a_plan_of_a_thousand_tasks_starts_no_agent_and_the_run_fails_cleanly(plait: Plait, project: Path) -> None:
    tasks = [{"id": f"t{i}", "title": f"Part {i}", "instructions": "Do it.", "writes": f"f{i}.py"} for i in range(1000)]
    huge = {"name": "submit_plan", "arguments": {"mode": "parallel", "reason": "one file each", "tasks": tasks}}
    turns = [{"tool_calls": [huge]}] * 3
    script = project.parent / "planner.json"
    script.write_text(json.dumps({"conversations": [{"match": "You are the planner", "turns": turns}]}))
    model = f"scripted:{script}"
    failed = plait("run", "Split greet", "--model", model, "--yes", "-q", "--split", "always", cwd=project)
    assert failed.code == 1, failed.err
    assert failed.err.strip().count("\n") == 0 and "the plan has 1000 tasks, more than the 24" in failed.err
    kinds = [e["kind"] for e in _events(project)]
    assert kinds.count("plan_rejected") == 3 and "task_started" not in kinds and kinds[-1] == "run_finished"
    assert git(project, "branch", "--list", "plait/*") == ""
