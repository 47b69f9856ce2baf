"""Parallel runs: makespan against the critical path, speed-up, orchestrator CPU and memory, worktree set-up.

Simulated agents go through the real scheduler, the real agent loop, real worktrees and the real
event log; only the model is simulated: each reply takes LATENCY seconds. Every agent makes two
model calls (write a file, finish), so a task takes at least 2 x LATENCY.

  makespan / bound: the run's wall time over the lower bound max(critical path, total work / limit)
  speed-up: the same agents one after another (the sum of their busy time, measured in this run) over
            the run's wall time

The last table times worktree set-up per agent on a real repository (--repo, a local clone; not
committed anywhere) against plain `git worktree add` on the same repository, measured in the same run.

Run: .venv/bin/python benchmarks/bench_scheduler.py [--latency 0.2] [--repo /path/to/clone]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

from plait.events import SQLiteEventStore, TaskFinished, TaskStarted
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from plait.models import FunctionModel
from plait.plan_model import Plan, PlanTask
from plait.run.base import RunBase
from plait.run.integrate import DirectIntegrator
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from plait.workspace.git import PLAIT_IDENTITY


def dag(n: int, seed: int) -> Plan:
    """A layered random DAG: each task depends on up to two tasks of earlier layers."""
    rng = random.Random(seed)
    width = max(2, int(n**0.5))
    tasks: list[PlanTask] = []
    for i in range(n):
        layer = i // width
        earlier = [t.id for t in tasks if int(t.id[1:]) // width < layer]
        deps = rng.sample(earlier[-2 * width :], k=min(len(earlier), rng.choice([0, 1, 1, 2]))) if earlier else []
        tasks.append(
            PlanTask(
                id=f"t{i}", title=f"task {i}", instructions="write your file", writes=[f"f{i}.txt"], depends_on=deps
            )
        )
    return Plan(mode="parallel", reason="benchmark", tasks=tasks)


def critical_path(plan: Plan) -> int:
    depth: dict[str, int] = {}
    for task in plan.tasks:  # tasks only depend on earlier ones
        depth[task.id] = 1 + max((depth[d] for d in task.depends_on), default=0)
    return max(depth.values())


def model(latency: float) -> FunctionModel:
    async def reply(request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(latency)
        first = request.messages[0]
        name = first.text.split("`")[1] if hasattr(first, "text") and "`" in first.text else "x"
        if not any(isinstance(m, AssistantMessage) for m in request.messages):
            return ModelResponse(
                tool_calls=(ToolCall.parse("w", "write_file", {"path": f"{name}.txt", "content": name}),)
            )
        return ModelResponse(tool_calls=(ToolCall.parse("f", "finish", {"summary": "ok"}),))

    return FunctionModel(reply)


def make_repo(root: Path) -> Repo:
    root.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, env={**PLAIT_IDENTITY, "PATH": "/usr/bin:/bin"})
    return Repo.discover(root)


def one_run(n: int, limit: int, latency: float, seed: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo")
        store = SQLiteEventStore(Path(tmp) / "events.db")
        plan = dag(n, seed)
        settings = Settings(concurrency=limit, max_attempts=1, task_wall_time=None)
        ctx = PlanContext(
            repo=repo,
            settings=settings,
            model=model(latency),
            log=RunLog(store, "b"),
            base=RunBase(repo.head(), "main"),
            runners=lambda p, a, e: LocalShell(),
        )
        before = resource.getrusage(resource.RUSAGE_SELF)
        tracemalloc.start()
        started = time.perf_counter()
        outcome = asyncio.run(run_plan(ctx, plan, DirectIntegrator(repo.head(), "main")))
        wall = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        after = resource.getrusage(resource.RUSAGE_SELF)
        assert all(r.status == "done" for r in outcome.results.values())
        spans: dict[str, list[float]] = {}
        for e in store.events("b"):
            if isinstance(e, (TaskStarted, TaskFinished)):
                spans.setdefault(e.agent, []).append(e.ts)
        busy = sum(max(ts) - min(ts) for ts in spans.values())
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        bound = max(critical_path(plan) * 2 * latency, n * 2 * latency / limit)
        store.close()
        return {"wall": wall, "bound": bound, "busy": busy, "cpu": cpu, "peak": peak}


def worktree_times(source: Path, agents: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", "--shared", str(source), str(clone)], check=True)
        repo = Repo.discover(clone)
        plain, ours = [], []
        for i in range(agents):
            t = time.perf_counter()
            subprocess.run(
                ["git", "-C", str(clone), "worktree", "add", "-q", "-b", f"plain{i}", f"{tmp}/p{i}"], check=True
            )
            plain.append(time.perf_counter() - t)
            t = time.perf_counter()
            repo.add_worktree(Path(tmp) / f"o{i}", f"ours{i}", "HEAD")
            ours.append(time.perf_counter() - t)
        return statistics.median(plain), statistics.median(ours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--sizes", default="8,32,128")
    parser.add_argument("--limits", default="1,4,16,64")
    parser.add_argument("--repo", type=Path, help="a local clone of a large repository for the worktree table")
    args = parser.parse_args()
    print(f"model latency {args.latency}s per call, 2 calls per agent")
    print(
        f"{'tasks':>5} {'limit':>5} {'makespan':>9} {'bound':>7} {'ratio':>6} {'serial':>8} {'speed-up':>8} "
        f"{'cpu/agent':>10} {'mem/agent':>10}"
    )
    for n in map(int, args.sizes.split(",")):
        for limit in map(int, args.limits.split(",")):
            if limit > n or n / limit > 40:  # one agent after another on a big DAG only repeats the serial column
                continue
            r = one_run(n, limit, args.latency, seed=n)
            print(
                f"{n:>5} {limit:>5} {r['wall']:>8.2f}s {r['bound']:>6.2f}s {r['wall'] / r['bound']:>6.2f} "
                f"{r['busy']:>7.2f}s {r['busy'] / r['wall']:>7.2f}x {1000 * r['cpu'] / n:>8.1f}ms "
                f"{r['peak'] / n / 1024:>8.0f}KB"
            )
    if args.repo:
        plain, ours = worktree_times(args.repo, 5)
        print(f"\nworktree set-up on {args.repo.name} (median of 5)")
        print(f"{'git worktree add (baseline)':<32} {plain * 1000:>8.0f} ms")
        print(f"{'plait add_worktree':<32} {ours * 1000:>8.0f} ms   ratio {ours / plain:.2f}")


if __name__ == "__main__":
    main()
