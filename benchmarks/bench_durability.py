"""Durability costs: the event log's share of a run's wall time, and the time to resume a 10,000-event run.

1. Log overhead: a parallel run of simulated agents (model replies take LATENCY seconds, every
   tool runs for real) with the time spent appending events summed, against the run's wall time.
2. Resume: a run of 4 agents that logs about 10,000 events, then dies (its process "crashes": the
   model raises mid-run). `plait resume`'s work is timed: reading the run's state from the log, then
   replaying every agent to the point of the crash (no model call is sent: each is read back), and
   the one remaining call. Baseline: the same agents run from scratch with the same model latency,
   which is what a crash without the journal would cost.

Run: .venv/bin/python benchmarks/bench_durability.py [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from plait.events import Event, EventStore, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.integrate import DirectIntegrator
from plait.run.parallel import PlanContext, run_plan
from plait.run.state import load_state
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from plait.workspace.git import PLAIT_IDENTITY


class TimedStore:
    """An EventStore that sums the time spent appending."""

    def __init__(self, inner: SQLiteEventStore) -> None:
        self.inner, self.spent, self.count = inner, 0.0, 0

    def append(self, event: Event) -> Event:
        t = time.perf_counter()
        stored = self.inner.append(event)
        self.spent += time.perf_counter() - t
        self.count += 1
        return stored

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        return self.inner.events(run_id, agent=agent, kinds=kinds, after=after)

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def close(self) -> None:
        self.inner.close()


class Crash(BaseException):  # like a kill: nothing isolates it
    pass


def agent_model(latency: float, steps: int, crash_at: int | None) -> FunctionModel:
    async def reply(request: ModelRequest) -> ModelResponse:
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
        if crash_at is not None and turn == crash_at:
            raise Crash
        await asyncio.sleep(latency)
        first = request.messages[0]
        name = first.text.split("`")[1] if isinstance(first, UserMessage) and "`" in first.text else "x"
        if turn < steps - 1:
            args = {"path": f"{name}.txt", "content": f"{name} step {turn}\n"}
            return ModelResponse(tool_calls=(ToolCall.parse(f"c{turn}", "write_file", args),))
        return ModelResponse(tool_calls=(ToolCall.parse("f", "finish", {"summary": "ok"}),))

    return FunctionModel(reply)


def repo_at(root: Path) -> Repo:
    root.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, env={**PLAIT_IDENTITY, "PATH": "/usr/bin:/bin"})
    return Repo.discover(root)


def plan(n: int) -> Plan:
    tasks = [PlanTask(id=f"a{i}", title=f"agent {i}", instructions="work", writes=[f"a{i}.txt"]) for i in range(n)]
    return Plan(mode="parallel", reason="benchmark", tasks=tasks)


def context(repo: Repo, store: EventStore, model: FunctionModel, limit: int) -> PlanContext:
    settings = Settings(concurrency=limit, max_attempts=1, task_wall_time=None, max_steps=10_000, max_tokens=10**12)
    return PlanContext(
        repo=repo,
        settings=settings,
        model=model,
        log=RunLog(store, "d"),
        base=RunBase(repo.head(), "main"),
        runners=lambda p, a, e: LocalShell(),
    )


def overhead(latency: float) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = repo_at(Path(tmp) / "repo")
        store = TimedStore(SQLiteEventStore(Path(tmp) / "events.db"))
        started = time.perf_counter()
        asyncio.run(
            run_plan(
                context(repo, store, agent_model(latency, 20, None), 8), plan(16), DirectIntegrator(repo.head(), "main")
            )
        )
        wall = time.perf_counter() - started
        return store.spent, wall, store.count


def resume(latency: float, steps: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = repo_at(Path(tmp) / "repo")
        store = SQLiteEventStore(Path(tmp) / "events.db")
        work = plan(4)
        started = time.perf_counter()
        try:
            asyncio.run(
                run_plan(
                    context(repo, store, agent_model(latency, steps, steps - 1), 4),
                    work,
                    DirectIntegrator(repo.head(), "main"),
                )
            )
        except BaseExceptionGroup:
            pass
        first_run = time.perf_counter() - started
        events = len(store.events("d"))
        t = time.perf_counter()
        state = load_state(RunLog(store, "d"))
        read = time.perf_counter() - t
        t = time.perf_counter()
        ctx = context(repo, store, agent_model(latency, steps, None), 4)
        ctx.state = state
        outcome = asyncio.run(run_plan(ctx, work, DirectIntegrator(repo.head(), "main")))
        replay = time.perf_counter() - t
        assert all(r.status == "done" for r in outcome.results.values()), outcome.results
        store.close()
        return {"events": events, "read": read, "replay": replay, "first": first_run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--steps", type=int, default=620, help="model calls per agent in the resume run")
    args = parser.parse_args()
    spent, wall, count = overhead(args.latency)
    print(f"{'measure':<52} {'value':>12}")
    print(f"{'log overhead: events appended in the run':<52} {count:>12,}")
    print(f"{'log overhead: time appending / run wall time':<52} {spent:>8.2f}s / {wall:.2f}s = {spent / wall:.1%}")
    r = resume(args.latency, args.steps)
    print(f"{'resume: events in the crashed run':<52} {r['events']:>12,.0f}")
    print(f"{'resume: read run state from the log':<52} {r['read'] * 1000:>10.0f}ms")
    print(f"{'resume: replay to the crash and finish':<52} {r['replay']:>11.2f}s")
    print(f"{'baseline: the same agents from scratch (no journal)':<52} {r['first']:>11.2f}s")
    print(f"{'ratio resume / from scratch':<52} {r['replay'] / r['first']:>12.3f}")


if __name__ == "__main__":
    main()
