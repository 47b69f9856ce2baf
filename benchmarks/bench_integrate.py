"""A two-branch `plait integrate` against `git merge`, on real merges, start-up included.

A local mirror of a real repository (pallets/click by default) is cloned into a temporary directory (the
mirror is never written). N two-parent merges whose parents git merges cleanly and N whose parents
conflict are taken from its history, newest first; for each, its parents become branches `a` and `b`, and
taking turns in the same run:

- git: `git merge --no-edit b` in a worktree at `a` (the baseline; a conflicted merge is aborted after);
- plait, default gate: `plait integrate a b --onto BASE --no-llm` as a new process, BASE their merge base,
  no verify command configured (so the gate detects one in the tree, as it would for a user: click's pytest
  suite, which takes about a minute here, so only the first `--gated` merges of each kind are timed this way);
- plait, `--no-verify`: the same with the verify stage skipped (parse and semantic checks only);
- plait, `--verify true`: a verify command that does nothing, so what it costs is the gate's worktree.

With `--baseline REV` (repeated for several) that commit's code (a `git worktree add` of this checkout, put first
on PYTHONPATH) is measured too, each merge's runs taking turns with the working tree's. Medians per kind of merge of
the wall time and of the CPU time (user + system of the process and the git it ran: the steadier figure on a loaded
machine), the ratio of wall times to git's, and the machine's 1-minute load average at the start and the end.

Run: .venv/bin/python benchmarks/bench_integrate.py [--merges 20] [--gated 3] [--source MIRROR] [--baseline REV]...
     [--json]
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path("/work/.mirror/pallets+click/repo")
MODES = {"default gate": [], "--no-verify": ["--no-verify"], "--verify true": ["--verify", "true"]}
"""How plait is run; `--verify true` is the gate's worktree with a verify command that costs nothing."""


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True)


def _merges(repo: Path, wanted: int) -> dict[str, list[tuple[str, str, str]]]:
    """Up to `wanted` clean and `wanted` conflicting merges: (merge, first parent, second parent)."""
    found: dict[str, list[tuple[str, str, str]]] = {"clean": [], "conflict": []}
    for line in _git(repo, "rev-list", "--merges", "--parents", "HEAD").stdout.splitlines():
        commit, *parents = line.split()
        if len(parents) != 2:
            continue
        if any(
            _git(repo, "merge-base", "--is-ancestor", x, y, check=False).returncode == 0
            for x, y in (parents, parents[::-1])
        ):
            continue
        status = _git(repo, "merge-tree", "--write-tree", "--name-only", *parents, check=False).returncode
        kind = {0: "clean", 1: "conflict"}.get(status)
        if kind and len(found[kind]) < wanted:
            found[kind].append((commit, parents[0], parents[1]))
        if all(len(v) >= wanted for v in found.values()):
            break
    return found


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Wall time, CPU time (user + system, the process and the git it ran) and exit status of `argv`."""
    began, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - began, _cpu() - cpu, done.returncode


def _git_merge(work: Path, ours: str, theirs: str) -> tuple[float, float]:
    _git(work, "checkout", "-q", "-f", "--detach", ours)
    took, cpu, status = _timed(["git", "merge", "-q", "--no-edit", theirs], work)
    if status:
        _git(work, "merge", "--abort", check=False)
    return took, cpu


def measure(source: Path, merges: int, baselines: Sequence[str] = (), gated: int = 3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="plait-integrate-") as tmp:
        root = Path(tmp)
        repo, work = root / "repo", root / "git-merge"
        subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
        for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com")):
            _git(repo, "config", key, value)
        _git(repo, "worktree", "add", "-q", "--detach", str(work), "HEAD")
        env = {**os.environ, "HOME": str(root / "home"), "GIT_CONFIG_GLOBAL": "/dev/null", "NO_COLOR": "1"}
        for name in ("PLAIT_STORE", "PLAIT_VERIFY_COMMAND", "PLAIT_MODEL"):
            env.pop(name, None)
        codes: dict[str, dict[str, str]] = {}
        wheres = [root / f"baseline-{i}" for i in range(len(baselines))]
        try:
            for rev, where in zip(baselines, wheres, strict=True):
                subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), rev], cwd=ROOT, check=True)
                codes[f"{rev} "] = {**env, "PYTHONPATH": str(where / "src")}
            codes[""] = {**env, "PYTHONPATH": str(ROOT / "src")}
            loads = [os.getloadavg()[0]]
            rows = _run(repo, work, _merges(repo, merges), codes, gated)
            loads.append(os.getloadavg()[0])
        finally:
            for where in wheres:
                if where.exists():
                    subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, check=False)
    load = statistics.mean(loads)
    extra = {"baselines": list(baselines), "load_1min": load, "loads_1min": loads}
    return {"source": str(source), "merges": merges, "gated": gated, **extra, **rows}


def _run(
    repo: Path,
    work: Path,
    cases: dict[str, list[tuple[str, str, str]]],
    codes: dict[str, dict[str, str]],
    gated: int,
) -> dict[str, Any]:
    times: dict[str, dict[str, list[tuple[float, float]]]] = {kind: {} for kind in cases}
    exits: dict[str, dict[str, dict[int, int]]] = {kind: {} for kind in cases}
    for env in codes.values():  # one start unmeasured: a new checkout's modules are compiled
        _timed([sys.executable, "-m", "plait", "--version"], repo, env)
    for kind, found in cases.items():
        for i, (_, first, second) in enumerate(found):
            base = _git(repo, "merge-base", first, second).stdout.split()[0]
            a, b = f"bench-{kind}-{i}-a", f"bench-{kind}-{i}-b"
            _git(repo, "branch", "-f", a, first)
            _git(repo, "branch", "-f", b, second)
            times[kind].setdefault("git merge", []).append(_git_merge(work, first, second))
            for label, env in codes.items():
                for mode, extra in MODES.items():
                    if not extra and i >= gated:
                        continue
                    argv = [sys.executable, "-m", "plait", "integrate", a, b, "--onto", base, "--no-llm", *extra]
                    took, cpu, status = _timed(argv, repo, env)
                    times[kind].setdefault(label + "plait " + mode, []).append((took, cpu))
                    counted = exits[kind].setdefault(label + "plait " + mode, {})
                    counted[status] = counted.get(status, 0) + 1
    table: dict[str, dict[str, dict[str, float]]] = {}
    for kind, by in times.items():
        git_wall = statistics.median(t for t, _ in by["git merge"])
        table[kind] = {
            name: {
                "median_s": statistics.median(t for t, _ in runs),
                "cpu_s": statistics.median(c for _, c in runs),
                "x_git": statistics.median(t for t, _ in runs) / git_wall,
                "runs": len(runs),
            }
            for name, runs in by.items()
        }
    return {"counts": {k: len(v) for k, v in cases.items()}, "table": table, "exit_statuses": exits}


def _print(result: dict[str, Any]) -> None:
    counts = f"{result['counts']}, the default gate on {result['gated']} of each"
    loads = " to ".join(f"{x:.1f}" for x in result["loads_1min"])
    print(f"{result['source']}: {counts}; 1-minute load average {loads} (start to end)")
    print(f"| {'merge':8} | {'command':40} | {'runs':>4} | {'wall':>8} | {'CPU':>8} | {'x git (wall)':>12} |")
    print(f"|{'-' * 10}|{'-' * 42}|{'-' * 5}:|{'-' * 9}:|{'-' * 9}:|{'-' * 13}:|")
    for kind, rows in result["table"].items():
        for name, row in rows.items():
            wall, cpu = f"{row['median_s'] * 1000:.0f} ms", f"{row['cpu_s'] * 1000:.0f} ms"
            print(f"| {kind:8} | {name:40} | {row['runs']:4} | {wall:>8} | {cpu:>8} | {row['x_git']:12.1f} |")
    print(f"exit statuses: {json.dumps(result['exit_statuses'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", type=int, default=20, help="merges of each kind, clean and conflicting")
    parser.add_argument("--source", type=Path, default=SOURCE, help="a local mirror to clone (never written)")
    parser.add_argument(
        "--gated", type=int, default=3, help="merges of each kind timed with the default gate too (it runs the tests)"
    )
    parser.add_argument(
        "--baseline", action="append", default=[], help="a commit whose code is measured too (repeat for several)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    result = measure(args.source, args.merges, args.baseline, args.gated)
    print(json.dumps(result, indent=2) if args.json else "", end="\n" if args.json else "")
    if not args.json:
        _print(result)


if __name__ == "__main__":
    main()
