"""plait's own cost: notes delivery, the order ready tasks start in, and tool specs, each against its baseline.

(a) notes delivery: agents of an n-task plan take turns, each taking its notes every turn and posting a
    note every other turn; the time spent in `Board.take`, against the previous algorithm (every note judged
    again for every agent each turn, kept here only as the baseline), on the same log in the same run. Both
    must hand out the same notes; the benchmark stops if they do not.
(b) makespan over the critical-path bound, max(critical path, total work / limit) x 2 replies x LATENCY, at
    concurrency 16, ready tasks started in plan order (the baseline) or by critical path. Two 64-task plans:
    `chains` lists 40 independent tasks before 4 chains of 6; `layered` is bench_scheduler's random layered
    DAG. Each is run by the scheduler alone (each attempt sleeps 2 x LATENCY) and as a full run: the real
    agent loop, worktrees, event log and integration, a scripted model that sleeps LATENCY per reply.
    Each full run also says the share of its wall time spent appending to the event log on the event loop's
    thread (every agent waits for those) and in all (what is appended from worker threads too); an event posted to
    the store's writer thread counts its posting, and its writing where a read on the loop writes it.
(c) `tool_spec` per call, cached against building the schema every time, over the seven tools of an agent.

With `--baseline REV[,REV...]` only the full runs of (b) are made, by the code of each commit REV (checked out with
`git worktree add`, first on PYTHONPATH) and by the working tree's, taking turns for `--rounds` rounds: makespan over
the bound, CPU seconds (the process and its git processes) and the appends' share of each, every version in the same
invocation.

Run: .venv/bin/python benchmarks/bench_plait_cost.py [--latency 1.0] [--skip-full] [--full-only]
     [--baseline REV[,REV...] [--rounds 2]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from plait.agent.arguments import _built_spec, tool_spec
from plait.agent.tools import (
    EditFileArgs,
    FinishArgs,
    ListFilesArgs,
    ReadFileArgs,
    RunArgs,
    SearchArgs,
    WriteFileArgs,
)
from plait.coord import Board, Note
from plait.coord.board import EVERYONE, _interest, _touches
from plait.events import Event, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.plan_model import Contract, Plan, PlanTask
from plait.run import parallel, scheduler
from plait.run.base import RunBase
from plait.run.integrate import DirectIntegrator
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from plait.workspace.git import PLAIT_IDENTITY

sys.path.insert(0, str(Path(__file__).parent))
from bench_scheduler import dag

CONCURRENCY = 16


class RescanBoard(Board):
    """The previous delivery, as the baseline: every note judged again for the agent at each of its turns,
    matching its paths against the agent's patterns each time."""

    def concerns(self, note: Note, task_id: str) -> bool:
        if note.author == task_id:
            return False
        if note.to:
            return task_id in note.to
        if note.topic == EVERYONE:
            return True
        try:
            task = self.plan.task(task_id)
        except KeyError:
            return False
        if note.topic in task.provides or note.topic in task.consumes:
            return True
        return _touches([*_interest(self.plan, task), *sorted(self._claimed.get(task_id, ()))], note.paths)

    def take(self, task_id: str) -> list[str]:
        self._sync()
        with self._lock:
            given = self._given.setdefault(task_id, set())
            waiting = [n for n in self.notes if n.seq not in given and self.concerns(n, task_id)]
            waiting.sort(key=lambda n: (task_id not in n.to, -n.seq))
            out: list[str] = []
            used = 0
            for note in waiting:
                text = note.render()
                if used + len(text) > self.budget:
                    if out:
                        break
                    text = text[: self.budget] + "... (cut: the note is longer than a turn's notes may be)"
                out.append(text)
                used += len(text)
                given.add(note.seq)
            left = len(waiting) - len(out)
        if left:
            out.append(
                f"({left} more note(s) wait for your next turn: this turn's notes reached {self.budget} characters.)"
            )
        return out


def board_plan(n: int) -> Plan:
    """n tasks, each writing its own module and reading its neighbour's; one task in 8 provides a contract."""
    tasks = [
        PlanTask(
            id=f"t{i}",
            title=f"task {i}",
            instructions="x",
            writes=[f"src/m{i}/**"],
            reads=[f"src/m{(i + 1) % n}/api.py"],
            provides=[f"c{i}"] if i % 8 == 0 else [],
            consumes=[f"c{i - i % 8}"] if i % 8 else [],
        )
        for i in range(n)
    ]
    contracts = [
        Contract(name=f"c{i}", signature="def f() -> int", owner=f"t{i}", path=f"src/c{i}.py") for i in range(0, n, 8)
    ]
    return Plan(mode="parallel", reason="benchmark", tasks=tasks, contracts=contracts)


def notes_delivery(n: int, turns: int = 8) -> tuple[float, float, int]:
    """Seconds spent in take by the rescanning board and by the board, and the notes posted."""
    plan = board_plan(n)
    rng = random.Random(n)
    spent = {"old": 0.0, "new": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteEventStore(Path(tmp) / "events.db", synchronous="OFF")
        old, new = RescanBoard(RunLog(store, "b"), plan), Board(RunLog(store, "b"), plan)
        posted = 0
        for turn in range(turns):
            for i in range(n):
                task = f"t{i}"
                if turn % 2 == i % 2:
                    where = rng.choice([f"src/m{i}/api.py", f"src/c{i - i % 8}.py", f"src/m{rng.randrange(n)}/x.py"])
                    to = [f"t{rng.randrange(n)}"] if rng.random() < 0.1 else []
                    topic = "all" if rng.random() < 0.02 else rng.choice(["finding", "warning", f"c{i - i % 8}"])
                    new.post(task, topic, f"note {posted} from {task}: " + "x" * 80, [where], to)
                    posted += 1
                got = {}
                for name, board in (("old", old), ("new", new)):
                    started = time.perf_counter()
                    got[name] = board.take(task)
                    spent[name] += time.perf_counter() - started
                if got["old"] != got["new"] and "--no-check" not in sys.argv:
                    raise SystemExit(f"the boards disagree at turn {turn} of {task}")
        store.close()
    return spent["old"], spent["new"], posted


class TimedSQLite(SQLiteEventStore):
    """The SQLite store, timing the writes of posted events made outside an append (by its writer thread, or by
    a read that flushes them): on the event loop's thread, and in all. The code before posted nothing."""

    def __init__(self, path: Path, loop_thread: int) -> None:
        super().__init__(path)
        self.loop_thread = loop_thread
        self.on_loop = self.total = 0.0
        self.appending = threading.local()

    def _written(self, taken: list, **how: bool) -> list:  # type: ignore[type-arg]
        if getattr(self.appending, "now", False):
            return super()._written(taken, **how)  # type: ignore[misc]
        started = time.perf_counter()
        try:
            return super()._written(taken, **how)  # type: ignore[misc]
        finally:
            took = time.perf_counter() - started
            self.total += took
            if threading.get_ident() == self.loop_thread:
                self.on_loop += took


class TimedStore:
    """An EventStore that sums the time spent appending and posting: on the event loop's thread, and in all."""

    def __init__(self, path: Path) -> None:
        self.loop_thread = threading.get_ident()
        self.inner = TimedSQLite(path, self.loop_thread)
        self._on_loop = self._total = 0.0
        self._lock = threading.Lock()

    @property
    def on_loop(self) -> float:
        return self._on_loop + self.inner.on_loop

    @property
    def total(self) -> float:
        return self._total + self.inner.total

    def _timed(self, started: float) -> None:
        took = time.perf_counter() - started
        with self._lock:
            self._total += took
            if threading.get_ident() == self.loop_thread:
                self._on_loop += took

    def append(self, event: Event) -> Event:
        started = time.perf_counter()
        self.inner.appending.now = True
        try:
            return self.inner.append(event)
        finally:
            self.inner.appending.now = False
            self._timed(started)

    def post(self, event: Event, then: object = None) -> None:
        started = time.perf_counter()
        try:
            self.inner.post(event, then)  # type: ignore[attr-defined]
        finally:
            self._timed(started)

    def events(
        self, run_id: str, *, agent: str | None = None, kinds: Sequence[str] = (), after: int = 0
    ) -> list[Event]:
        return self.inner.events(run_id, agent=agent, kinds=kinds, after=after)

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def close(self) -> None:
        self.inner.close()


FULL_RUNS: list[tuple[str, float, float, float, float]] = []
"""(run, wall, seconds appending on the event loop's thread, seconds appending in all, CPU seconds of the process
and its git processes) of each full run."""


def plan_order(self: scheduler.Scheduler) -> None:
    """The baseline: ready tasks start in plan order."""
    self.priority = {task: (0, i) for i, task in enumerate(self.deps)}


@contextmanager
def ordered(by: str) -> Iterator[None]:
    """Run schedulers in plan order (`plan`) or, as they do now, by critical path."""
    if by == "critical path":
        yield
        return

    class PlanOrder(scheduler.Scheduler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            plan_order(self)

    with mock.patch.object(parallel, "Scheduler", PlanOrder):
        yield


def chains_plan() -> Plan:
    """40 independent tasks listed first, then 4 chains of 6 tasks: 64 in all, a critical path of 6."""
    tasks = [PlanTask(id=f"t{i}", title=f"task {i}", instructions="x", writes=[f"t{i}.txt"]) for i in range(40)]
    for c in range(4):
        for k in range(6):
            i = 40 + 6 * c + k
            after = [f"t{i - 1}"] if k else []
            tasks.append(
                PlanTask(id=f"t{i}", title=f"task {i}", instructions="x", writes=[f"t{i}.txt"], depends_on=after)
            )
    return Plan(mode="parallel", reason="benchmark", tasks=tasks)


def bound(plan: Plan, latency: float) -> float:
    depth: dict[str, int] = {}
    for task in plan.tasks:  # tasks only depend on earlier ones
        depth[task.id] = 1 + max((depth[d] for d in task.depends_on), default=0)
    return max(max(depth.values()), len(plan.tasks) / CONCURRENCY) * 2 * latency


def scheduler_only(plan: Plan, latency: float, by: str) -> float:
    async def attempt(task: str, number: int, last: scheduler.Attempt | None) -> scheduler.Attempt:
        await asyncio.sleep(2 * latency)
        return scheduler.Attempt(True)

    run = scheduler.Scheduler({t.id: t.depends_on for t in plan.tasks}, attempt, concurrency=CONCURRENCY)
    if by == "plan":
        plan_order(run)
    started = time.perf_counter()
    asyncio.run(run.run())
    return time.perf_counter() - started


def scripted(plan: Plan, latency: float) -> ScriptedModel:
    conversations = [
        {
            "match": f"Your task is `{t.id}`",
            "turns": [
                {
                    "delay": latency,
                    "tool_calls": [{"name": "write_file", "arguments": {"path": t.writes[0], "content": t.id}}],
                },
                {"delay": latency, "tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]},
            ],
        }
        for t in plan.tasks
    ]
    return ScriptedModel(conversations=conversations)


def full_run(plan: Plan, latency: float, by: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "base"]):
            subprocess.run(["git", *args], cwd=root, check=True, env={**PLAIT_IDENTITY, "PATH": "/usr/bin:/bin"})
        repo = Repo.discover(root)
        store = TimedStore(Path(tmp) / "events.db")
        ctx = PlanContext(
            repo=repo,
            settings=Settings(concurrency=CONCURRENCY, max_attempts=1, task_wall_time=None),
            model=scripted(plan, latency),
            log=RunLog(store, "b"),
            base=RunBase(repo.head(), "main"),
            runners=lambda p, a, e: LocalShell(),
        )
        with ordered(by):
            cpu, started = _cpu(), time.perf_counter()
            outcome = asyncio.run(run_plan(ctx, plan, DirectIntegrator(repo.head(), "main")))
            wall, cpu = time.perf_counter() - started, _cpu() - cpu
        store.close()
        FULL_RUNS.append((by, wall, store.on_loop, store.total, cpu))
        if any(r.status != "done" for r in outcome.results.values()):
            raise SystemExit(f"the {by} run dropped tasks: {outcome.dropped}")
        return wall


def _cpu() -> float:
    """CPU seconds of this process and of the children it has waited for (git)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def per_call(fn: Callable[[], object], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - started) / calls


def tool_specs(calls: int = 300) -> tuple[float, float]:
    tools: Mapping[str, type] = {
        "read_file": ReadFileArgs,
        "list_files": ListFilesArgs,
        "search": SearchArgs,
        "edit_file": EditFileArgs,
        "write_file": WriteFileArgs,
        "run": RunArgs,
        "finish": FinishArgs,
    }
    uncached = _built_spec.__wrapped__
    cold = per_call(lambda: [uncached(name, args, None) for name, args in tools.items()], calls)
    warm = per_call(lambda: [tool_spec(name, args) for name, args in tools.items()], calls)
    return cold, warm


def row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--skip-full", action="store_true", help="leave out the full runs of (b)")
    parser.add_argument("--full-only", action="store_true", help="only (b), and only its full runs")
    parser.add_argument(
        "--baseline", help="commits (comma-separated) whose code makes the full runs too, taking turns (worktree add)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline: turns of each version")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a version's full runs, for --baseline
    args = parser.parse_args()
    if args.json:
        makespans(args.latency, scheduler=False, full=True)
        print(json.dumps(FULL_RUNS))
        return
    print(f"load: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}\n")
    if args.baseline:
        before_and_after(args.baseline.split(","), args.latency, args.rounds)
        print(f"load: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
        return
    if not args.full_only:
        print_notes()
    makespans(args.latency, scheduler=not args.full_only, full=not args.skip_full)
    if not args.full_only:
        print_tool_specs()


def before_and_after(revs: list[str], latency: float, rounds: int) -> None:
    """The full runs by each commit of `revs` and by the working tree's code, taking turns; medians of the rounds."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        versions: dict[str, Path] = {}
        for rev in revs:
            where = Path(tmp) / rev
            subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), rev], cwd=root, check=True)
            versions[rev] = where / "src"
        versions["after"] = root / "src"
        got: dict[str, list[list[tuple[str, float, float, float, float]]]] = {v: [] for v in versions}
        try:
            for _ in range(rounds):
                for version, src in versions.items():
                    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
                    cmd = [sys.executable, __file__, "--json", "--latency", str(latency)]
                    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
                    got[version].append([tuple(r) for r in json.loads(out.splitlines()[-1])])
        finally:
            for rev in revs:
                subprocess.run(["git", "worktree", "remove", "--force", str(Path(tmp) / rev)], cwd=root, check=False)
    plans = {"chains": chains_plan(), "layered": dag(64, 64)}
    head = [f"64 tasks, limit {CONCURRENCY}, full run ({rounds} round(s), medians)"]
    for version in versions:
        head += [f"{version}: makespan / bound", f"{version}: CPU", f"{version}: appends on the loop"]
    print(row(head))
    print(row(["---"] * len(head)))
    for i, (name, *_) in enumerate(got["after"][0]):
        b = bound(plans[name.split(",")[0]], latency)
        cells: list[object] = [name]
        for version in versions:
            wall = statistics.median(r[i][1] for r in got[version])
            loop = statistics.median(r[i][2] / r[i][1] for r in got[version])
            cpu = statistics.median(r[i][4] for r in got[version])
            cells += [f"{wall:.1f} s = {wall / b:.2f}", f"{cpu:.1f} s", f"{loop:.1%}"]
        print(row(cells))


def print_notes() -> None:
    print(row(["(a) notes delivery", "notes", "every note each turn (baseline)", "indexed, per-agent cursor", "ratio"]))
    print(row(["---"] * 5))
    for n in (16, 64, 128):
        old, new, posted = notes_delivery(n)
        print(row([f"{n} tasks, 8 turns each", posted, f"{old:.3f} s", f"{new:.3f} s", f"{old / new:.1f}x"]))
    print()


def makespans(latency: float, *, scheduler: bool, full: bool) -> None:
    print(
        row(
            [
                f"(b) makespan / bound, 64 tasks, limit {CONCURRENCY}",
                "bound",
                "plan order (baseline)",
                "critical path",
                "ratio",
            ]
        )
    )
    print(row(["---"] * 5))
    plans = {"chains": chains_plan(), "layered": dag(64, 64)}
    runs: list[tuple[str, Callable[[Plan, float, str], float]]] = [("scheduler alone", scheduler_only)]
    runs = runs if scheduler else []
    if full:
        runs.append(("full run", full_run))
    for kind, run in runs:
        for name, plan in plans.items():
            b = bound(plan, latency)
            old, new = run(plan, latency, "plan"), run(plan, latency, "critical path")
            if kind == "full run":
                FULL_RUNS[-2:] = [(f"{name}, {by}", *rest) for by, *rest in FULL_RUNS[-2:]]  # type: ignore[misc]
            print(
                row(
                    [
                        f"{name}, {kind}",
                        f"{b:.1f} s",
                        f"{old:.1f} s = {old / b:.2f}",
                        f"{new:.1f} s = {new / b:.2f}",
                        f"{old / new:.2f}x",
                    ]
                )
            )
    print()
    if FULL_RUNS:
        print(row(["(b) appends in the full runs", "wall", "on the event loop", "in all (any thread)", "CPU"]))
        print(row(["---"] * 5))
        for name, wall, on_loop, total, cpu in FULL_RUNS:
            cells = [name, f"{wall:.1f} s", f"{on_loop:.2f} s = {on_loop / wall:.1%}", f"{total:.2f} s", f"{cpu:.1f} s"]
            print(row(cells))
        print()


def print_tool_specs() -> None:
    cold, warm = tool_specs()
    print(row(["(c) tool_spec, 7 tools", "", "built each call (baseline)", "cached", "ratio"]))
    print(row(["---"] * 5))
    print(row(["per agent model call", "", f"{cold * 1e3:.2f} ms", f"{warm * 1e3:.4f} ms", f"{cold / warm:.0f}x"]))


if __name__ == "__main__":
    main()
