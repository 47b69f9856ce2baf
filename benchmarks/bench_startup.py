"""Start-up time of the read-only commands: how long `plait` takes before it is any use.

A demo run (`plait demo --fast --no-tui`, made by the baseline's code when there is one: a log an older plait
wrote, which both read) is made in a temporary repository, then each command is started
N times as a new process and its median wall time is printed, against `python -c pass` (the interpreter's own
start) and `git status` in the same repository, measured in the same run, with the ratio to each, and the imports
the commands stand on: plait's own floor (the command line, `plait.workspace`, `plait.trust`, JSON and SQLite:
what a read-only command that reads the log imports whatever it prints), rich alone (what a table cost before the
tables were drawn without rich's console when not a terminal), pydantic and rich (a command that reads events as
models), and typer (which parses parameters with pydantic) with them (any command typer parses). With
`--baseline REV`, that commit's `src` (checked out with `git worktree add`, put first on PYTHONPATH) is measured
too, each command's starts taking turns with the working tree's.

Run: .venv/bin/python benchmarks/bench_startup.py [--runs 15] [--baseline REV] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: list[tuple[str, list[str]]] = [
    ("plait --help", ["--help"]),
    ("plait --version", ["--version"]),
    ("plait runs", ["runs"]),
    ("plait status", ["status"]),
    ("plait status --json", ["status", "--json"]),
    ("plait show last --no-pager", ["show", "last", "--no-pager"]),
    ("plait log last", ["log", "last"]),
    ("plait cost last", ["cost", "last"]),
]


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


ROOT = Path(__file__).resolve().parent.parent
_LIBRARIES = "import typer, typer._adapters, rich.console, rich.table"
"""What any command of a typer app pays before its own code runs: typer parses parameters with pydantic."""
_RICH = "import rich.console, rich.table"
"""What a command that draws a table pays without typer (`plait runs`)."""
_PYDANTIC = "import pydantic, rich.console, rich.table; from pydantic import BaseModel"
"""What a command that reads events as pydantic models pays without typer (`status`, `show`, `log`, `cost`)."""
_FLOOR = "import plait.cli._fast, plait.workspace, plait.ui._reading, json, sqlite3"
"""What every read-only command that reads the log pays before its own work: the command line, finding the
repository (`plait.workspace`), the settings' file names (`plait.trust`), JSON and SQLite."""


def _walls(argv: list[str], cwd: Path, envs: list[dict[str, str]], runs: int) -> list[tuple[float, float]]:
    """For each environment, the median wall time and CPU time (user + system) of `argv`, in seconds, after one
    unmeasured start (the page cache, .pyc files); the environments take turns. On a loaded machine the CPU time is
    the steadier figure."""
    walls: list[list[float]] = [[] for _ in envs]
    cpus: list[list[float]] = [[] for _ in envs]
    for i in range(runs + 1):
        for j, env in enumerate(envs):
            began, cpu = time.perf_counter(), _cpu()
            subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if i:
                walls[j].append(time.perf_counter() - began)
                cpus[j].append(_cpu() - cpu)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus, strict=True)]


def _wall(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> tuple[float, float]:
    return _walls(argv, cwd, [env], runs)[0]


def _demo(root: Path, env: dict[str, str]) -> Path:
    repo = root / "demo"
    argv = [sys.executable, "-m", "plait", "demo", "--dir", str(repo), "--fast", "--no-tui"]
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return repo


def measure(runs: int, baseline: str = "") -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="plait-startup-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "HOME": str(root / "home"), "GIT_CONFIG_GLOBAL": "/dev/null", "COLUMNS": "120"}
        env.pop("PLAIT_STORE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user starts it: from bytecode the unmeasured start cached
        envs = {"": {**env, "PYTHONPATH": str(ROOT / "src")}}
        if baseline:
            where = root / "baseline"
            subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), baseline], cwd=ROOT, check=True)
            envs = {f"{baseline} ": {**env, "PYTHONPATH": str(where / "src")}, **envs}
        try:
            repo = _demo(root, next(iter(envs.values())))
            load = os.getloadavg()[0]
            python, python_cpu = _wall([sys.executable, "-c", "pass"], repo, env, runs)
            git, git_cpu = _wall(["git", "status"], repo, env, runs)
            rows = [
                {"command": "python -c pass", "median_s": python, "cpu_s": python_cpu},
                {"command": "git status", "median_s": git, "cpu_s": git_cpu},
            ]
            for label, code in (
                ("import plait's floor", _FLOOR),
                ("import rich", _RICH),
                ("import pydantic, rich", _PYDANTIC),
                ("import typer, pydantic, rich", _LIBRARIES),
            ):
                took, cpu = _wall([sys.executable, "-c", code], repo, envs[""], runs)  # the working tree's plait
                rows.append({"command": label, "median_s": took, "cpu_s": cpu})
            for name, args in COMMANDS:
                measured = _walls([sys.executable, "-m", "plait", *args], repo, list(envs.values()), runs)
                for label, (took, cpu) in zip(envs, measured, strict=True):
                    rows.append({"command": label + name, "median_s": took, "cpu_s": cpu})
        finally:
            if baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(root / "baseline")], cwd=ROOT, check=False)
    for row in rows:
        row |= {"x_python": row["median_s"] / python, "x_git_status": row["median_s"] / git}
    return {"runs": runs, "baseline": baseline, "load_1min": (load + os.getloadavg()[0]) / 2, "commands": rows}


def _print(result: dict[str, object]) -> None:
    print(f"median of {result['runs']} starts, 1-minute load average {result['load_1min']:.1f}")
    print(f"| {'command':34} | {'wall':>7} | {'CPU':>7} | {'x python -c pass':>16} | {'x git status':>12} |")
    print(f"|{'-' * 36}|{'-' * 8}:|{'-' * 8}:|{'-' * 17}:|{'-' * 13}:|")
    for row in result["commands"]:  # type: ignore[attr-defined]
        wall, cpu = f"{row['median_s'] * 1000:.0f} ms", f"{row['cpu_s'] * 1000:.0f} ms"
        print(f"| {row['command']:34} | {wall:>7} | {cpu:>7} | {row['x_python']:16.1f} | {row['x_git_status']:12.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="starts per command (the median is kept)")
    parser.add_argument("--baseline", default="", help="a commit whose code is measured too (git worktree add)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    result = measure(args.runs, args.baseline)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)


if __name__ == "__main__":
    main()
