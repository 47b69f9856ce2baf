"""The conflict radar tells two agents editing the same lines about each other while they still work."""

from __future__ import annotations

import asyncio
from pathlib import Path

from integrators import MergeTreeIntegrator

from plait.events import NotePosted, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo


def test_two_agents_changing_the_same_lines_are_warned_at_their_next_turn(repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    seen: dict[str, list[str]] = {}

    async def reply(request: ModelRequest) -> ModelResponse:
        first = request.messages[0]
        me = first.text.split("`")[1] if isinstance(first, UserMessage) else "?"
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        seen[me] = [m.text for m in request.messages if isinstance(m, UserMessage)]
        if turn == 0:
            value = "1" if me == "left" else "2"
            args = {"path": "alpha.py", "old": "return 0", "new": f"return {value}"}
            return ModelResponse(tool_calls=(ToolCall.parse("e", "edit_file", args),))
        if turn == 1:  # hold this turn until the radar has spoken to me: the next request must carry it
            for _ in range(400):
                notes = [e for e in store.events("r1", kinds=["note"]) if isinstance(e, NotePosted) and me in e.to]
                if notes:
                    break
                await asyncio.sleep(0.025)
            return ModelResponse(tool_calls=(ToolCall.parse("l", "list_files", {}),))
        return ModelResponse(tool_calls=(ToolCall.parse("f", "finish", {"summary": "done"}),))

    tasks = [
        PlanTask(id=i, title=f"{i} change to alpha", instructions="change alpha", writes=["alpha.py"])
        for i in ("left", "right")
    ]
    ctx = PlanContext(
        repo=repo,
        settings=Settings(concurrency=2, max_attempts=1, radar_interval=0.05),
        model=FunctionModel(reply),
        log=RunLog(store, "r1"),
        base=RunBase(repo.head(), "main"),
        runners=lambda p, a, e: LocalShell(),
    )
    asyncio.run(
        run_plan(ctx, Plan(mode="parallel", reason="test", tasks=tasks), MergeTreeIntegrator(repo, "r1", repo.head()))
    )

    notes = [e for e in store.events("r1") if isinstance(e, NotePosted)]
    assert {tuple(n.to) for n in notes} >= {("left",), ("right",)}
    assert all(n.agent == "radar" and n.paths == ["alpha.py"] for n in notes if n.topic == "conflict")
    for me, other in (("left", "right"), ("right", "left")):
        told = [t for t in seen[me] if "Conflict radar" in t]
        assert told and f"task `{other}`" in told[0] and "alpha.py" in told[0]


def test_a_file_the_plan_shares_is_not_one_to_leave_alone(repo: Repo, tmp_path: Path) -> None:
    """Tasks told to add their own lines to a shared file are not told to keep out of it when they do."""
    from plait.run.radar import Radar

    store = SQLiteEventStore(tmp_path / "events.db")
    tasks = [PlanTask(id=i, title=i, instructions="x", writes=["pkg/__init__.py", f"{i}.py"]) for i in ("a", "b")]
    plan = Plan(mode="parallel", reason="r", tasks=tasks, shared=["pkg/__init__.py"])
    radar = Radar(repo, RunLog(store, "r1"), plan, repo.head)

    radar._warn("a", "b", ["pkg/__init__.py"])
    radar._warn("a", "b", ["pkg/__init__.py", "alpha.py"])

    shared, both = (e.text for e in store.events("r1") if isinstance(e, NotePosted))
    assert "leave those files alone" not in shared and "the merge keeps both tasks' additions" in shared
    assert "alpha.py overlap lines" in both and "leave those files alone" in both
    assert "adding to pkg/__init__.py, which the plan shares" in both
