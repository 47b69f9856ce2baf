"""The ray backend against the local one: a scripted parallel run, local with SQLite, local with PostgreSQL, and on
a two-node Ray cluster with PostgreSQL, all in one invocation on the same machine.

Each of the N tasks (`--tasks`, default 64) is one agent of three model replies that take `--latency` seconds each
(a real `plait run --plan` talking to the tests' wire server, OpenAI format): it writes a module, runs a command
that burns `--burn` seconds of CPU (its "verify step", counted with process_time, so the CPU spent is the same
whatever the load) and imports the module, then finishes. Every run has the same concurrency (`--concurrency`);
the Ray cluster is `ray.cluster_utils.Cluster` as the tests start it, a head that runs nothing and two nodes of
concurrency / 2 logical CPUs each, every attempt asking for one (`task_cpus`). The two "nodes" are processes of
this machine and share its cores with the driver, the model server and PostgreSQL: the Ray run cannot be faster
here, it shows what the backend costs.

Per attempt, from the event log's timestamps (one clock: every process is on this machine):
    start    task_started (driver) -> the agent's first model call: worktree made, agent set up; for ray: the
             Ray placement and queue wait (task_started -> the worker's `placed` decision), then the worker's
             clone from the base bundle, worktree, runner and agent (`placed` -> first model call)
    finish   the agent's `commit` -> the driver's `merge` of its branch: for ray, the result bundle made, put in
             the store, returned through Ray, fetched into the user's repository
The base bundle (made once per run) and one result's bundle and fetch are also timed on their own.

The event log: events appended, appends per second over the run, and the driver's time inside the stores' append
(a timing wrapper, in the benchmark's child process only), on the event loop's thread and on any thread, as a
share of the run's wall time. For ray the workers' own appends are in the count but not in the timed share. The
PostgreSQL connections open during the run are sampled every 0.5 s (pg_stat_activity) and their peak reported.

Run: .venv/bin/python benchmarks/bench_ray.py [--tasks 64] [--concurrency 8] [--latency 1.0] [--burn 1.0]
     [--modes sqlite,postgres,ray] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
QUERY = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
BURN = "import sys, time\nend = time.process_time() + float(sys.argv[1])\nwhile time.process_time() < end:\n    pass\n"


def script(tasks: int, latency: float, burn: float) -> dict[str, Any]:
    conversations = []
    for i in range(tasks):
        name = f"t{i:03d}"
        turns = [
            {
                "text": "Writing it.",
                "delay": latency,
                "tool_calls": [_call("write_file", path=f"{name}.py", content=f"def f():\n    return {i}\n")],
            },
            {
                "text": "Checking it.",
                "delay": latency,
                "tool_calls": [_call("run", command=f"python3 burn.py {burn} && python3 -c 'import {name}'")],
            },
            {"delay": latency, "tool_calls": [_call("finish", summary=f"{name} is there")]},
        ]
        conversations.append({"name": name, "match": f"Your task is `{name}`", "turns": turns})
    return {"conversations": conversations}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def plan(tasks: int) -> str:
    rows = [
        f"  - {{id: t{i:03d}, title: module {i}, instructions: Add t{i:03d}.py., writes: [t{i:03d}.py]}}"
        for i in range(tasks)
    ]
    return "tasks:\n" + "\n".join(rows) + "\n"


def environment(tmp: Path, concurrency: int) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    ident = {"GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.invalid"}
    ident |= {"GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    return {
        "PATH": path,
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PLAIT_CONCURRENCY": str(concurrency),
    } | ident


def make_repo(where: Path, env: dict[str, str]) -> Path:
    where.mkdir()
    (where / "burn.py").write_text(BURN)
    (where / "base.py").write_text("NAME = 'base'\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=where, env=env, check=True, capture_output=True)
    return where


# -- the child: plait's CLI with its stores' appends timed ---------------------------------------------------------


def child(times: str, argv: list[str]) -> None:
    import atexit
    import runpy

    from plait.events import PostgresEventStore, SQLiteEventStore

    totals = {"loop": 0.0, "all": 0.0, "count": 0.0}
    lock, main_thread = threading.Lock(), threading.main_thread()

    def timed(original: Any) -> Any:
        def append(self: Any, event: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self, event)
            finally:
                spent = time.perf_counter() - started
                with lock:
                    totals["all"] += spent
                    totals["count"] += 1
                    if threading.current_thread() is main_thread:
                        totals["loop"] += spent

        return append

    for cls in (SQLiteEventStore, PostgresEventStore):
        cls.append = timed(cls.append)  # type: ignore[method-assign]
    atexit.register(lambda: Path(times).write_text(json.dumps(totals)))
    sys.argv = ["plait", *argv]
    runpy.run_module("plait", run_name="__main__", alter_sys=True)


# -- the parent ------------------------------------------------------------------------------------------------------


class Connections:
    """The peak number of connections to one PostgreSQL database, sampled while a run goes."""

    def __init__(self, url: str) -> None:
        self.url, self.peak, self._stop = url, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Connections:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._stop.wait(0.5):
                row = conn.execute(QUERY).fetchone()
                self.peak = max(self.peak, int(row[0]) if row else 0)


def run_once(mode: str, tmp: Path, args: argparse.Namespace, spec: str, url: str, address: str) -> dict[str, Any]:
    env = environment(tmp, args.concurrency) | {"PLAIT_MAX_TASKS": str(max(24, args.tasks))}
    repo = make_repo(tmp / mode, env)
    plan_file = tmp / f"{mode}-plan.yaml"
    plan_file.write_text(plan(args.tasks))
    times = tmp / f"{mode}-times.json"
    argv = ["run", "Add the modules", "--plan", str(plan_file), "--model", spec, "--yes", "--json", "--no-tui"]
    if mode != "sqlite":
        env["PLAIT_STORE"] = url
    if mode == "ray":
        argv += ["--backend", "ray", "--ray-address", address]
    command = [sys.executable, __file__, "--child", str(times), "--", *argv, "-C", str(repo)]
    sampler = Connections(url) if mode != "sqlite" else None
    started = time.perf_counter()
    with sampler or contextlib.nullcontext():
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the {mode} run failed ({done.returncode}): {done.stderr.strip()[-1500:]}")
    result = json.loads(done.stdout)
    if result.get("status") != "done":
        raise SystemExit(f"the {mode} run ended {result.get('status')}: {done.stdout[-1500:]}")
    events = read_events(repo, url if mode != "sqlite" else "", result["run_id"])
    found = {"mode": mode, "wall": wall, "repo": str(repo), "branch": result["branch"]}
    found |= analyse(events, args.concurrency)
    found["tree"] = subprocess.run(
        ["git", "rev-parse", f"{result['branch']}^{{tree}}"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    found["timed"] = json.loads(times.read_text()) if times.exists() else {}
    found["connections"] = sampler.peak if sampler else 0
    return found


def read_events(repo: Path, url: str, run_id: str) -> list[Any]:
    from plait.events import PostgresEventStore, SQLiteEventStore

    store: Any = PostgresEventStore(url) if url else SQLiteEventStore(repo / ".git" / "plait" / "events.db")
    try:
        return list(store.events(run_id))
    finally:
        store.close()


def analyse(events: list[Any], slots: int) -> dict[str, Any]:
    """Per-attempt phases from the log's timestamps (each task's last attempt), and the log's own figures."""
    first: dict[str, dict[str, float]] = {}
    for e in events:
        seen = first.setdefault(e.agent, {}) if e.agent else None
        if e.kind == "task_started" and seen is not None:
            seen.clear()  # a retry: measure the last attempt
            seen["started"] = e.ts
        elif seen is None:
            if e.kind == "merge":
                first.setdefault(e.task, {}).setdefault("merged", e.ts)
            continue
        elif e.kind == "placed":
            seen["placed"] = e.ts
        elif e.kind == "model_request":
            seen.setdefault("first_call", e.ts)
        elif e.kind == "commit":
            seen["commit"] = e.ts
        elif e.kind == "merge":
            seen.setdefault("merged", e.ts)
    tasks = {a: t for a, t in first.items() if "started" in t and "first_call" in t}

    def median(a: str, b: str) -> float:
        spans = [t[b] - t[a] for t in tasks.values() if a in t and b in t]
        return statistics.median(spans) if spans else float("nan")

    order = sorted((t for t in tasks.values() if "placed" in t), key=lambda t: t["started"])
    cold = [t["placed"] - t["started"] for t in order[:slots]]  # the cluster's worker processes start for these
    warm = [t["placed"] - t["started"] for t in order[slots:]]
    span = events[-1].ts - events[0].ts if events else 0.0
    return {
        "events": len(events),
        "log_span": span,
        "tasks": len(tasks),
        "start": median("started", "first_call"),
        "placement": median("started", "placed"),
        "placement_cold": statistics.median(cold) if cold else float("nan"),
        "placement_warm": statistics.median(warm) if warm else float("nan"),
        "worker_setup": median("placed", "first_call"),
        "agent": median("first_call", "commit"),
        "finish": median("commit", "merged"),
    }


def bundle_costs(repo: Path, branch: str) -> dict[str, float]:
    """The base bundle, and one task's result bundle made and fetched into a clone of the base, timed alone."""
    from plait.workspace.bundles import bundle, clone_from_bundle, unbundle

    base = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=repo, capture_output=True, text=True)
    root = base.stdout.split()[0]
    result = subprocess.run(
        ["git", "log", "--format=%H", "-1", f"{branch}", "--", "t000.py"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        data, made = _timed(bundle, repo, root)
        clone, cloned = _timed(clone_from_bundle, Path(tmp) / "clone", data)
        extra, result_made = _timed(bundle, repo, result, since=[root])
        _, fetched = _timed(unbundle, clone, extra)
    sizes = {"base_bytes": len(data), "result_bytes": len(extra)}
    return sizes | {"base_made": made, "cloned": cloned, "result_made": result_made, "fetched": fetched}


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    return fn(*args, **kwargs), time.perf_counter() - started


def start_cluster(cpus: int) -> Any:
    from ray.cluster_utils import Cluster

    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(2):
        made.add_node(num_cpus=cpus)
    made.wait_for_nodes()
    return made


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def report(runs: list[dict[str, Any]], bundles: dict[str, float], args: argparse.Namespace, loads: list[str]) -> None:
    base = next((r for r in runs if r["mode"] == "sqlite"), runs[0])
    bound = 3 * args.latency + args.burn
    print(
        f"{args.tasks} tasks, concurrency {args.concurrency}, replies {args.latency:g} s x 3, burn {args.burn:g} s CPU"
    )
    print(f"{os.cpu_count()} CPUs; " + "; ".join(loads))
    cpu = args.tasks * args.burn / (os.cpu_count() or 1)
    slots = f"{args.tasks} tasks / {args.concurrency} slots x {bound:g} s"
    print(f"bound: {slots} = {args.tasks / args.concurrency * bound:.1f} s; CPU alone: {cpu:.1f} s")
    head = (
        "run",
        "wall",
        f"wall / bound, x {base['mode']}",
        "start",
        "placed",
        "worker setup",
        "agent",
        "commit->merge",
        "events",
        "events/s",
        "driver's appends: time loop / all (count)",
        "per append",
        "share (loop / all)",
        "pg conns",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in runs:
        t = r["timed"]
        cells = [
            r["mode"],
            f"{r['wall']:.1f} s",
            f"{r['wall'] / (args.tasks / args.concurrency * bound):.2f}, {r['wall'] / base['wall']:.2f}",
            f"{r['start']:.2f} s",
            "—"
            if r["mode"] != "ray"
            else f"{r['placement']:.2f} s ({r['placement_cold']:.2f} / {r['placement_warm']:.2f})",
            "—" if r["mode"] != "ray" else f"{r['worker_setup']:.2f} s",
            f"{r['agent']:.2f} s",
            f"{r['finish']:.2f} s",
            f"{r['events']:,}",
            f"{r['events'] / r['log_span']:.0f}",
            f"{t.get('loop', 0):.2f} / {t.get('all', 0):.2f} s ({t.get('count', 0):,.0f})",
            f"{1000 * t.get('all', 0) / max(1, t.get('count', 0)):.1f} ms",
            f"{t.get('loop', 0) / r['wall']:.1%} / {t.get('all', 0) / r['wall']:.1%}",
            str(r["connections"] or "—"),
        ]
        print("| " + " | ".join(cells) + " |")
    trees = {r["tree"] for r in runs}
    print(f"same tree in every run: {len(trees) == 1}")
    print(
        f"bundles: base {bundles['base_bytes']:,} B made in {bundles['base_made'] * 1000:.0f} ms, cloned in "
        f"{bundles['cloned'] * 1000:.0f} ms; one result {bundles['result_bytes']:,} B made in "
        f"{bundles['result_made'] * 1000:.0f} ms, fetched in {bundles['fetched'] * 1000:.0f} ms"
    )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--burn", type=float, default=1.0)
    parser.add_argument("--modes", default="sqlite,postgres,ray")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "durability")]
    import yaml
    from keyed_model import KeyedModel

    from pg_cluster import start_postgres
    from wire_server import WireServer

    modes = args.modes.split(",")
    loads = [f"before: {uptime()}"]
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as where:
        tmp = Path(where)
        (tmp / "script.yaml").write_text(yaml.safe_dump(script(args.tasks, args.latency, args.burn)))
        server = start_postgres()
        runs: list[dict[str, Any]] = []
        try:
            with WireServer(KeyedModel(tmp / "script.yaml")) as wire:
                spec = f"openai-compatible:demo@{wire.openai_url}"
                for mode in modes:
                    url = server.database() if mode != "sqlite" else ""
                    if mode == "ray":
                        cluster = start_cluster(max(1, args.concurrency // 2))
                        try:
                            runs.append(run_once(mode, tmp, args, spec, url, cluster.address))
                        finally:
                            cluster.shutdown()
                    else:
                        runs.append(run_once(mode, tmp, args, spec, url, ""))
                    loads.append(f"after {mode}: {uptime()}")
            bundles = bundle_costs(Path(runs[0]["repo"]), runs[0]["branch"])
        finally:
            server.close()
    if args.json:
        print(json.dumps({"runs": runs, "bundles": bundles, "loads": loads}, indent=2))
    report(runs, bundles, args, loads)


if __name__ == "__main__":
    main()
