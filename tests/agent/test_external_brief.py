"""What an external agent (its own CLI, its own tools) is told: plait's brief without plait's own tools."""

from __future__ import annotations

from pathlib import Path

from plait.agent.external import CommandWorker, Job, make_worker
from plait.agent.prompts import shared_prefix, system_prompt
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.workspace import LocalShell

_PLAIT_TOOLS = ("edit_file", "write_file", "the run tool", "call finish", "Every reply must call at least one tool")


def _job(tmp_path: Path, system: str) -> Job:
    store = SQLiteEventStore(tmp_path / "e.db")
    return Job(log=RunLog(store, "r"), agent_id="t", attempt=1, runner=LocalShell(), worktree=tmp_path, system=system)


def test_an_external_agent_is_not_told_of_tools_it_does_not_have(tmp_path: Path) -> None:
    system = shared_prefix("pkg/a.py (1 KB)", "- t (your task): add a (writes: pkg/a.py)")
    assert all(name in system for name in _PLAIT_TOOLS)  # plait's own agent is told them
    worker = make_worker("command:true", _job(tmp_path, system))
    assert isinstance(worker, CommandWorker)
    given = worker.job.system
    assert not [name for name in _PLAIT_TOOLS if name in given]
    assert "end with a short summary of what you changed and how you verified it" in given
    assert "Do not commit" in given and "HOME is an empty directory" in given
    assert given.endswith(system[len(system_prompt()) :])  # the run's part, word for word


def test_a_system_prompt_that_is_not_plait_s_is_passed_on_as_it_is(tmp_path: Path) -> None:
    worker = make_worker("command:true", _job(tmp_path, "You work for plait."))
    assert isinstance(worker, CommandWorker) and worker.job.system == "You work for plait."
