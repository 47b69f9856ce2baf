"""The real-model yardstick: one plait run on a real PyPI package, played through a model server.

One command is one run. The driver prepares a fresh repository from the task's pinned sdist,
starts a local model server in files mode, runs plait against it in the background and waits;
meanwhile someone (a person or an agent) plays the model by answering the server's requests.
When plait ends, the hidden acceptance tests are run on a clean checkout of the result branch,
and one JSON line of figures is appended to the results file. ``--table`` prints them.

    python benchmarks/real_model/run.py toolz_four_functions --mode single --server PATH/bridge.py
    python benchmarks/real_model/run.py --table
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TASKS = HERE / "tasks"
RESULTS = HERE / "results.jsonl"
MODELS = {"openai": "openai:gpt-5.1", "anthropic": "anthropic:claude-sonnet-4-5"}


def load_task(name: str) -> dict[str, Any]:
    path = TASKS / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in TASKS.glob("*.toml")))
        sys.exit(f"error: no task {name!r} (known: {known})")
    task = tomllib.loads(path.read_text())
    task["name"] = name
    return task


def fetch_sdist(task: dict[str, Any], cache: Path, python: str) -> Path:
    """The task's pinned sdist, downloaded once into the cache (never into the repository)."""
    cache.mkdir(parents=True, exist_ok=True)
    spec = f"{task['package']}=={task['version']}"
    found = [p for p in cache.glob(f"*-{task['version']}.tar.gz") if _norm(p.name) == _norm(spec)]
    if not found:
        subprocess.run(
            [python, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", spec, "-d", str(cache)], check=True
        )
        found = [p for p in cache.glob(f"*-{task['version']}.tar.gz") if _norm(p.name) == _norm(spec)]
    if not found:
        sys.exit(f"error: pip downloaded no sdist for {spec} into {cache}")
    return found[0]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.removesuffix(".tar.gz").replace("==", "-")).lower()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True, capture_output=True).stdout.strip()


def prepare_repo(task: dict[str, Any], sdist: Path, repo: Path, python: str) -> None:
    """Extract the sdist into REPO, commit it, with a .plait.toml naming the verify command."""
    with tarfile.open(sdist) as tar:
        tar.extractall(repo.parent / "sdist", filter="data")
    (top,) = (repo.parent / "sdist").iterdir()
    top.rename(repo)
    for junk in repo.glob("*.egg-info"):
        shutil.rmtree(junk)
    verify = task["verify"].format(python=python)
    (repo / ".plait.toml").write_text(f"verify_command = {json.dumps(verify)}\n")
    (repo / ".gitignore").write_text("__pycache__/\n*.pyc\n.pytest_cache/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(
        repo,
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@localhost",
        "commit",
        "-q",
        "-m",
        f"{task['package']} {task['version']} from its sdist",
    )


def start_server(server: Path, play: Path, log: Path, out: Path) -> tuple[subprocess.Popen[bytes], int]:
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(server),
                "serve",
                "--mode",
                "files",
                "--dir",
                str(play),
                "--port",
                "0",
                "--log",
                str(log),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        m = re.search(r"http://127\.0\.0\.1:(\d+)", out.read_text(errors="replace"))
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"error: the model server did not start; see {out}")


def plait_json(plait: list[str], repo: Path, *args: str) -> Any:
    res = subprocess.run([*plait, *args, "--repo", str(repo), "--json"], capture_output=True, text=True)
    if res.returncode != 0:
        return None
    return json.loads(res.stdout)


def gate_summary(plait: list[str], repo: Path, run_id: str) -> dict[str, Any]:
    res = subprocess.run([*plait, "log", run_id, "--repo", str(repo), "--json"], capture_output=True, text=True)
    events = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    gates = [e for e in events if e.get("kind") == "gate"]
    verify = [e for e in gates if e.get("stage") == "verify"]
    return {
        "gate_checks": len(gates),
        "gate_failed": sum(not e.get("passed") for e in gates),
        "verify_runs": len(verify),
        "verify_failed": sum(not e.get("passed") for e in verify),
        "integrated": sum(e.get("kind") == "integrated" for e in events),
        "ejected": sum(len(e.get("ejected") or []) for e in events if e.get("kind") == "integrated"),
        "notes": sum(e.get("kind") == "note" for e in events),
    }


def acceptance(task: dict[str, Any], repo: Path, branch: str, where: Path, python: str) -> dict[str, Any]:
    """Run the hidden tests on a clean clone of BRANCH; they are copied in only now."""
    if not branch:
        return {"passed": False, "output": "no result branch"}
    subprocess.run(["git", "clone", "-q", "--branch", branch, str(repo), str(where)], check=True)
    shutil.copy(TASKS / task["acceptance"], where / task["acceptance"])
    cmd = task["acceptance_command"].format(python=shlex.quote(python), acceptance=task["acceptance"])
    res = subprocess.run(
        cmd, shell=True, cwd=where, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(where)}
    )
    tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
    return {"passed": res.returncode == 0, "output": tail}


def server_stats(server: Path, log: Path) -> dict[str, Any]:
    res = subprocess.run([sys.executable, str(server), "stats", str(log), "--json"], capture_output=True, text=True)
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError:
        return {"error": (res.stderr or res.stdout).strip()[-500:]}


def billed(stats: dict[str, Any]) -> float | None:
    """The billed-equivalent input tokens, wherever the stats put their total."""
    total = stats.get("total", stats)
    for key in ("billed_equivalent", "billed", "billed_in", "billed_input"):
        if isinstance(total, dict) and key in total:
            return float(total[key])
    return None


def run(args: argparse.Namespace) -> int:
    task = load_task(args.task)
    plait = shlex.split(args.plait)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    label = args.mode if args.split == "auto" else f"{args.mode}-split-{args.split}"
    base = Path(args.work).expanduser() / f"{task['name']}-{label}-{args.wire}-{stamp}"
    repo, play, log = base / "repo", base / "play", base / "calls.jsonl"
    base.mkdir(parents=True)
    prepare_repo(task, fetch_sdist(task, Path(args.cache).expanduser(), args.python), repo, args.python)
    server, port = start_server(Path(args.server), play, log, base / "server.out")
    env = dict(os.environ)
    if args.wire == "openai":
        env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="test")
    else:
        env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="test")
    cmd = [*plait, "run", "--no-tui", "--json", "--yes", "--model", MODELS[args.wire], "--repo", str(repo)]
    if args.mode == "single":
        cmd.append("--single")
    elif args.split != "auto":
        cmd += ["--split", args.split]
    cmd.append(task["task"].strip())
    print(f"run dir:  {base}\nserver:   http://127.0.0.1:{port} (files mode, log {log})")
    print(f"play:     python3 {args.server} next {play} --timeout 600")
    print(f"answer:   python3 {args.server} answer {play} ID answer.json")
    print(f"progress: tail -f {base / 'plait.err'}", flush=True)
    t0 = time.monotonic()
    with (base / "plait.json").open("wb") as out, (base / "plait.err").open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=out, stderr=err)
        try:
            rc = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            rc = proc.wait()
    wall = time.monotonic() - t0
    server.terminate()
    server.wait()
    try:
        result = json.loads((base / "plait.json").read_text())
    except json.JSONDecodeError:
        result = {}
    run_id = result.get("run_id", "")
    cost = plait_json(plait, repo, "cost", run_id or "last") or {}
    usage = cost.get("total", {}).get("usage", result.get("usage", {}))
    stats = server_stats(Path(args.server), log)
    accept = acceptance(task, repo, result.get("branch", ""), base / "accept", args.python)
    row = {
        "task": task["name"],
        "mode": args.mode,
        "split": args.split,
        "wire": args.wire,
        "when": stamp,
        "plait": args.plait,
        "plait_commit": args.plait_commit,
        "exit": rc,
        "run_id": run_id,
        "status": result.get("status"),
        "reason": result.get("reason"),
        "branch": result.get("branch"),
        "model_calls": cost.get("total", {}).get("calls", result.get("model_calls")),
        "tokens_in": usage.get("input_tokens"),
        "tokens_out": usage.get("output_tokens"),
        "tokens_cached": usage.get("cached_tokens"),
        "billed_in": billed(stats),
        "wall_s": round(wall, 1),
        "speedup": cost.get("time", {}).get("speedup"),
        "tasks": result.get("tasks"),
        **(gate_summary(plait, repo, run_id) if run_id else {}),
        "acceptance": accept["passed"],
        "acceptance_output": accept["output"],
        "server_stats": stats,
        "dir": str(base),
    }
    with Path(args.results).open("a") as f:
        f.write(json.dumps(row) + "\n")
    for key in (
        "status",
        "model_calls",
        "tokens_in",
        "tokens_out",
        "tokens_cached",
        "billed_in",
        "wall_s",
        "verify_runs",
        "verify_failed",
        "acceptance",
    ):
        print(f"{key:>14}: {row.get(key)}")
    if not accept["passed"]:
        print(accept["output"])
    return 0 if accept["passed"] else 1


def table(results: Path) -> int:
    """The latest run of each task, wire, plait commit and mode; a parallel row divided by the single row of the
    same commit and wire (rows of other commits never mix)."""
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    latest: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in rows:
        mode = r["mode"] if r.get("split", "auto") == "auto" else f"{r['mode']} (split {r['split']})"
        latest[(r["task"], r["wire"], r.get("plait_commit") or "?", mode)] = r
    head = (
        "| task | wire | plait | mode | calls | in | out | cached (plait / server) | written | billed in | wall s "
        "| gate (verify ✓/✗) | acceptance |"
    )
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for (name, wire, commit, mode), r in sorted(latest.items()):
        ok = (r.get("verify_runs") or 0) - (r.get("verify_failed") or 0)
        print(
            f"| {name} | {wire} | {commit} | {mode} | {r['model_calls']} | {_n(r['tokens_in'])} | "
            f"{_n(r['tokens_out'])} | {_n(r['tokens_cached'])} / {_n(_srv(r, 'cached'))} | "
            f"{_n(_srv(r, 'written'))} | {_n(r['billed_in'])} | "
            f"{r['wall_s']:.0f} | {ok}/{r.get('verify_failed') or 0} | "
            f"{'pass' if r['acceptance'] else 'FAIL'} |"
        )
        single = latest.get((name, wire, commit, "single"))
        if mode.startswith("parallel") and single:
            print(
                f"| {name} | {wire} | {commit} | {mode} ÷ single | {_ratio(r, single, 'model_calls')} | "
                f"{_ratio(r, single, 'tokens_in')} | {_ratio(r, single, 'tokens_out')} | | | "
                f"{_ratio(r, single, 'billed_in')} | {_ratio(r, single, 'wall_s')} | | |"
            )
    return 0


def _srv(r: dict[str, Any], key: str) -> Any:
    return (r.get("server_stats") or {}).get("total", {}).get(key)


def _n(x: Any) -> str:
    return "–" if x is None else f"{x:,.0f}"


def _ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> str:
    return f"{a[key] / b[key]:.2f}×" if a.get(key) and b.get(key) else "–"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", nargs="?", help="a task name: a .toml file in benchmarks/real_model/tasks/")
    p.add_argument(
        "--mode",
        choices=["single", "parallel"],
        default="single",
        help="plait run --single, or plait run (planned, parallel)",
    )
    p.add_argument("--wire", choices=sorted(MODELS), default="openai", help="the provider wire format")
    p.add_argument("--server", help="bridge.py of a local model server that has a files mode")
    p.add_argument(
        "--split",
        choices=["auto", "always"],
        default="auto",
        help="parallel mode: plait run --split; auto (the default, measure it first): plait's estimate decides "
        "whether the plan runs as one agent; always: the planner's split runs as proposed",
    )
    p.add_argument(
        "--plait",
        default=f"{shlex.quote(sys.executable)} -m plait",
        help="the plait command (run it from a fixed copy of the code, e.g. "
        "'env PYTHONPATH=/tmp/src/src .venv/bin/python -m plait')",
    )
    p.add_argument("--plait-commit", default="", help="the plait commit measured, for the record")
    p.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter, with pytest, for the verify command and the acceptance tests",
    )
    p.add_argument("--cache", default="~/.cache/plait-bench", help="where sdists are kept")
    p.add_argument("--work", default="~/.cache/plait-bench/runs", help="where run directories go")
    p.add_argument("--results", default=str(RESULTS), help="the JSON lines file of results")
    p.add_argument("--timeout", type=float, default=7200, help="seconds before plait is stopped")
    p.add_argument("--table", action="store_true", help="print the table of the latest results and exit")
    args = p.parse_args()
    if args.table:
        return table(Path(args.results))
    if not args.task or not args.server:
        p.error("a task and --server are needed for a run (or --table)")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
