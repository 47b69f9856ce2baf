"""Event stores side by side: appends per second and append latency, SQLite (the default) against PostgreSQL.

Each store is measured in the same run, on the same machine: one writer appending in a loop, then 16 threads
sharing one store object (as the agents of a run share theirs), all appending to one run, then each to its own
run. Every append is the event of a real run (a ~1 KB model response) and is durable when it returns, against a
power cut too: SQLite in WAL syncs a model's answer (synchronous=FULL for DURABLE_KINDS, its default), PostgreSQL
commits with synchronous_commit=on over a Unix socket.

Then a whole run, bench_durability.py's 16 agents of 20 steps each (--latency seconds per model reply, every tool
real), is logged in each store: its wall time with PostgreSQL against SQLite's, and the time its appends took.

PostgreSQL is the server at --url, else a throwaway cluster started as the tests start theirs
(tests/pg_cluster.py: initdb, then pg_ctl on a Unix socket in a temporary directory).

Then SQLite's durability against a power cut, in the same run: synchronous=NORMAL throughout (an append survives a
crash of plait, not of the machine), FULL throughout (every append synced to disk), and the default mix (NORMAL,
with the kinds that must survive a power cut, DURABLE_KINDS, synced): appends/s and microseconds per append of a
run's mix of events (a model request, its answer, a tool call, its result), by one writer alone and by one writer
while another thread runs Python (as a run's tool and git threads do; SQLite lets go of the interpreter lock while
it writes, and must wait to get it back).

Then where an append's time goes inside the 16-agent run, in each durability mode: the store as `plait run` stacks
it (listeners around redaction around SQLite), timed at the outside and at SQLite.

Run: .venv/bin/python benchmarks/bench_store.py [--part stores,sync,run] [--events 4000] [--latency 1.0]
     [--url postgresql://...] [--modes normal,mix,full]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from plait.events import (
    Event,
    EventStore,
    ModelCallFinished,
    ModelCallStarted,
    ObservedStore,
    SQLiteEventStore,
    ToolCalled,
    ToolReturned,
    open_event_store,
)
from plait.events.store import RedactingStore
from plait.messages import ModelResponse, ToolCall, Usage
from plait.redact import Redactor

WRITERS = 16


def _event(run_id: str, agent: str, call: int) -> ModelCallFinished:
    response = ModelResponse(
        text="I will read the module first, then change the function and run its tests. " * 8,
        tool_calls=(ToolCall.parse(f"c{call}", "read_file", {"path": "src/pkg/module.py"}),),
        usage=Usage(input_tokens=12_000, output_tokens=300, cached_tokens=9_000),
    )
    return ModelCallFinished(run_id=run_id, agent=agent, call=call, req_hash="h" * 64, response=response)


def _write(store: EventStore, run_id: str, agent: str, n: int, latencies: list[float]) -> None:
    mine = []
    for call in range(n):
        event = _event(run_id, agent, call)
        started = time.perf_counter()
        store.append(event)
        mine.append(time.perf_counter() - started)
    latencies.extend(mine)


def measure(location: str, path: Path, n: int, writers: int, same_run: bool) -> dict[str, float]:
    """Appends/s and latency percentiles (ms) of `writers` threads appending `n` events in all to one store."""
    store = open_event_store(location, path)
    latencies: list[float] = []
    threads = [
        threading.Thread(target=_write, args=(store, "r" if same_run else f"r{w}", f"a{w}", n // writers, latencies))
        for w in range(writers)
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    store.close()
    cuts = statistics.quantiles(latencies, n=100)
    return {
        "rate": len(latencies) / elapsed,
        "p50": cuts[49] * 1000,
        "p99": cuts[98] * 1000,
        "mean": statistics.fmean(latencies) * 1000,
    }


def run_share(location: str, path: Path, latency: float) -> tuple[float, float, int]:
    """(seconds appending, wall seconds, events) of the 16-agent run of bench_durability.py, logged in this store."""
    from bench_durability import TimedStore, agent_model, context, plan, repo_at

    from plait.run.integrate import DirectIntegrator
    from plait.run.parallel import run_plan

    with tempfile.TemporaryDirectory() as tmp:
        repo = repo_at(Path(tmp) / "repo")
        store = TimedStore(open_event_store(location, path))  # type: ignore[arg-type]
        started = time.perf_counter()
        work = context(repo, store, agent_model(latency, 20, None), 8)
        asyncio.run(run_plan(work, plan(16), DirectIntegrator(repo.head(), "main")))
        wall = time.perf_counter() - started
        store.close()
        return store.spent, wall, store.count


MODES = {
    "normal": ("NORMAL throughout", {"durable": ()}),
    "mix": ("NORMAL, DURABLE_KINDS synced (default)", {}),
    "full": ("FULL throughout", {"synchronous": "FULL"}),
}


def sqlite_store(path: Path, mode: str) -> SQLiteEventStore:
    return SQLiteEventStore(path, **MODES[mode][1])  # type: ignore[arg-type]


def _mix(n: int) -> list[Event]:
    """`n` events as a run appends them: a request, its answer, a tool call and the tool's output, again and again."""
    events: list[Event] = []
    for call in range(n // 4):
        tool = ToolCall.parse(f"c{call}", "read_file", {"path": "src/pkg/module.py"})
        events += [
            ModelCallStarted(run_id="r", agent="a", call=call, req_hash="h" * 64, model="m", messages=2 * call + 1),
            _event("r", "a", call),
            ToolCalled(run_id="r", agent="a", call=tool, step=call),
            ToolReturned(run_id="r", agent="a", call_id=tool.id, name="read_file", output="x = 1\n" * 150),
        ]
    return events


def _spin(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(1000))


def measure_sync(path: Path, mode: str, events: list[Event], busy: bool) -> dict[str, float]:
    """Appends/s and mean microseconds per append (all, answers alone, the rest) of one writer in one mode."""
    store = sqlite_store(path, mode)
    stop = threading.Event()
    spinner = threading.Thread(target=_spin, args=(stop,))
    if busy:
        spinner.start()
    spent: dict[bool, list[float]] = {True: [], False: []}
    started = time.perf_counter()
    for event in events:
        t = time.perf_counter()
        store.append(event)
        spent[event.kind == "model_response"].append(time.perf_counter() - t)
    elapsed = time.perf_counter() - started
    stop.set()
    if busy:
        spinner.join()
    store.close()
    every = spent[True] + spent[False]
    return {
        "rate": len(events) / elapsed,
        "all": statistics.fmean(every) * 1e6,
        "answer": statistics.fmean(spent[True]) * 1e6,
        "other": statistics.fmean(spent[False]) * 1e6,
    }


class _Timed:
    """An EventStore around another, summing the time its appends take."""

    def __init__(self, inner: EventStore) -> None:
        self.inner, self.spent, self.count = inner, 0.0, 0

    def append(self, event: Event) -> Event:
        t = time.perf_counter()
        stored = self.inner.append(event)
        self.spent += time.perf_counter() - t
        self.count += 1
        return stored

    def events(self, run_id: str, **kw: object) -> list[Event]:
        return self.inner.events(run_id, **kw)  # type: ignore[arg-type]

    def run_ids(self) -> list[str]:
        return self.inner.run_ids()

    def close(self) -> None:
        self.inner.close()


def run_layers(path: Path, mode: str, latency: float) -> dict[str, float]:
    """bench_durability.py's 16-agent run logged as `plait run` logs it: wall seconds, and microseconds per append
    at the outside of the store (listeners, redaction, SQLite) and at SQLite."""
    from bench_durability import agent_model, context, plan, repo_at

    from plait.run.integrate import DirectIntegrator
    from plait.run.parallel import run_plan

    with tempfile.TemporaryDirectory() as tmp:
        repo = repo_at(Path(tmp) / "repo")
        inner = _Timed(sqlite_store(path, mode))
        outer = _Timed(ObservedStore(RedactingStore(inner, Redactor())))
        started = time.perf_counter()
        work = context(repo, outer, agent_model(latency, 20, None), 8)
        asyncio.run(run_plan(work, plan(16), DirectIntegrator(repo.head(), "main")))
        wall = time.perf_counter() - started
        outer.close()
    return {
        "wall": wall,
        "count": outer.count,
        "outer": outer.spent / outer.count * 1e6,
        "sqlite": inner.spent / inner.count * 1e6,
        "share": outer.spent / wall,
    }


def _median(runs: list[dict[str, float]], key: str) -> dict[str, float]:
    return sorted(runs, key=lambda r: r[key])[len(runs) // 2]


def report_sync(tmp: Path, args: argparse.Namespace, modes: list[str]) -> None:
    events = _mix(args.events)
    rounds: dict[tuple[str, bool], list[dict[str, float]]] = defaultdict(list)
    for turn in range(args.repeat):
        for busy in (False, True):
            for mode in modes:
                rounds[(mode, busy)].append(measure_sync(tmp / f"sync-{turn}-{mode}-{busy}.db", mode, events, busy))
    print(f"\n{len(events)} appends of a run's mix of events, one writer, median of {args.repeat} rounds")
    print("| writer | durability | appends/s | µs per append | µs per answer | µs per other event |")
    print("|---|---|---:|---:|---:|---:|")
    for busy in (False, True):
        for mode in modes:
            r = _median(rounds[(mode, busy)], "rate")
            who = "beside a busy thread" if busy else "alone"
            print(
                f"| {who} | {MODES[mode][0]} | {r['rate']:,.0f} | {r['all']:.0f} | {r['answer']:.0f} "
                f"| {r['other']:.0f} |"
            )


def report_run(tmp: Path, args: argparse.Namespace, modes: list[str]) -> None:
    rounds: dict[str, list[dict[str, float]]] = defaultdict(list)
    for turn in range(args.repeat):
        for mode in modes:
            rounds[mode].append(run_layers(tmp / f"run-{turn}-{mode}.db", mode, args.latency))
    print(f"\nbench_durability.py's 16-agent run ({args.latency} s replies), median wall of {args.repeat} rounds")
    print("| durability | wall s | appends | µs per append (plait run's store) | of which SQLite | share of wall |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode in modes:
        r = _median(rounds[mode], "wall")
        print(
            f"| {MODES[mode][0]} | {r['wall']:.2f} | {r['count']:.0f} | {r['outer']:.0f} | {r['sqlite']:.0f} "
            f"| {r['share']:.1%} |"
        )


def _postgres(url: str | None) -> tuple[Callable[[], str], Callable[[], None]]:
    """A function giving a fresh database's URL, and one that stops the server started here (if any)."""
    if url:
        return (lambda: url), (lambda: None)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from pg_cluster import start_postgres

    server = start_postgres()
    return server.database, server.close


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the round of median appends/s is shown")
    parser.add_argument("--url", help="a PostgreSQL database to use (default: a throwaway cluster)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model reply in the whole run")
    parser.add_argument("--part", default="stores,sync,run", help="which comparisons: stores, sync, run")
    parser.add_argument("--modes", default="normal,mix,full", help="SQLite durability modes: normal, mix, full")
    args = parser.parse_args()
    parts, modes = args.part.split(","), args.modes.split(",")
    load_before = os.getloadavg()
    print(f"{os.cpu_count()} CPUs; load average {load_before[0]:.2f} before")
    with tempfile.TemporaryDirectory() as tmp:
        if "sync" in parts:
            report_sync(Path(tmp), args, modes)
        if "run" in parts:
            report_run(Path(tmp), args, modes)
    if "stores" in parts:
        compare_stores(args)
    print(f"load average {os.getloadavg()[0]:.2f} after")


def compare_stores(args: argparse.Namespace) -> None:
    n = args.events
    load_before = os.getloadavg()
    fresh_database, stop = _postgres(args.url)
    rounds: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    cases = [("1 writer", 1, True), (f"{WRITERS} writers, one run", WRITERS, True)]
    cases.append((f"{WRITERS} writers, a run each", WRITERS, False))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for turn in range(args.repeat):  # the stores take turns, so that both see the same load
                for label, writers, same_run in cases:
                    db = Path(tmp) / f"{turn}-{writers}-{same_run}.db"
                    rounds[("sqlite", label)].append(measure("", db, n, writers, same_run))
                    rounds[("postgresql", label)].append(measure(fresh_database(), db, n, writers, same_run))
            shares = {"sqlite": run_share("", Path(tmp) / "run.db", args.latency)}
            shares["postgresql"] = run_share(fresh_database(), Path(tmp) / "unused.db", args.latency)
    finally:
        stop()
    load_after = os.getloadavg()
    results = {key: sorted(runs, key=lambda r: r["rate"])[len(runs) // 2] for key, runs in rounds.items()}

    loads = f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    print(f"{os.cpu_count()} CPUs; {loads}; {n} events per case, median of {args.repeat} rounds")
    print("| writers | store | appends/s | p50 ms | p99 ms | PostgreSQL / SQLite appends/s |")
    print("|---|---|---:|---:|---:|---:|")
    for label, _, _ in cases:
        sqlite, postgres = results[("sqlite", label)], results[("postgresql", label)]
        for name, r in (("SQLite", sqlite), ("PostgreSQL", postgres)):
            ratio = f"{postgres['rate'] / sqlite['rate']:.2f}" if name == "PostgreSQL" else ""
            print(f"| {label} | {name} | {r['rate']:,.0f} | {r['p50']:.3f} | {r['p99']:.3f} | {ratio} |")
    base_wall = shares["sqlite"][1]
    for name, (spent, wall, count) in shares.items():
        print(
            f"{name}: bench_durability.py's 16-agent run ({args.latency} s replies): wall {wall:.2f} s "
            f"({wall / base_wall:.3f}x SQLite's); its {count} appends took {spent:.2f} s summed over the agents "
            "(they overlap)"
        )


if __name__ == "__main__":
    main()
