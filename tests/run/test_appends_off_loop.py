"""Every agent of a run works on one event loop: an attempt's own events (its worktree's intent, its start, its
prompt, its calls sent, its tool calls and results, how it ended) are appended off that loop's thread, the attempt
waiting for them and the other agents going on, and each agent's events stay in the order it logged them."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from integrators import MergeTreeIntegrator

from plait.events import Event, ObservedStore, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

OFF_LOOP = {"opening", "task_started", "prompt", "model_request", "tool_call", "tool_result", "task_finished"}


def _task(name: str) -> dict[str, object]:
    edit = {"path": f"{name}.py", "old": "return 0", "new": "return 1"}
    return {
        "match": f"Your task is `{name}`",
        "turns": [
            {"tool_calls": [{"name": "edit_file", "arguments": edit}]},
            {"tool_calls": [{"name": "finish", "arguments": {"summary": f"{name} returns 1"}}]},
        ],
    }


def test_an_attempts_own_events_are_appended_off_the_event_loop_in_order(repo: Repo, tmp_path: Path) -> None:
    written_on: dict[str, set[int]] = {}

    def where(event: Event) -> None:  # told in the thread that wrote the event
        written_on.setdefault(event.kind, set()).add(threading.get_ident())

    store = ObservedStore(SQLiteEventStore(tmp_path / "events.db"), where)
    base = RunBase(repo.head(), "main")
    names = ("alpha", "beta", "gamma")
    tasks = [PlanTask(id=n, title=n, instructions=f"Make {n} return 1.", writes=[f"{n}.py"]) for n in names]
    ctx = PlanContext(
        repo=repo,
        settings=Settings(concurrency=3, max_attempts=1),
        model=ScriptedModel(conversations=[_task(n) for n in names]),
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
    )

    plan = Plan(mode="parallel", reason="three", tasks=tasks)

    async def run() -> tuple[int, dict[str, str]]:
        outcome = await run_plan(ctx, plan, MergeTreeIntegrator(repo, "r1", base.commit))
        return threading.get_ident(), {t: r.status for t, r in outcome.results.items()}

    loop_thread, statuses = asyncio.run(run())

    assert statuses == dict.fromkeys(names, "done")
    assert OFF_LOOP <= set(written_on)
    assert {kind: loop_thread in written_on[kind] for kind in OFF_LOOP} == dict.fromkeys(OFF_LOOP, False)
    for name in names:
        kinds = [e.kind for e in store.events("r1", agent=name) if e.kind in OFF_LOOP | {"model_response", "commit"}]
        assert kinds == [
            "opening",
            "task_started",
            "prompt",
            "model_request",
            "model_response",
            "tool_call",
            "tool_result",
            "model_request",
            "model_response",
            "tool_call",
            "tool_result",
            "commit",
            "task_finished",
        ]
    store.close()
