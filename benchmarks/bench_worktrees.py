"""An agent's worktree: creation and removal time and bytes written per agent, plait's pool against `worktree add`.

The repository (git/git by default) is cloned with `git clone --no-checkout` from a local mirror into a temporary
directory, never inside this checkout. A run of N agents is played in it twice, taking turns agent by agent:

- plain git: `git worktree add -b <branch> <path> <base>`, the agent's edits, `git worktree remove --force`;
- plait: `make_worktree` (a worktree of the run's pool recycled, a new one when the pool is empty), the same
  edits, the commit-less `give_back` to the pool; the pool is emptied at the run's end, its time shared out;
- plait, layered (where this process may mount an overlay): `make_worktree(layered=True)`, an overlay over the
  run's one shared checkout (made by the first agent), the same edits, `remove`; the shared checkout is deleted
  at the run's end. "Written" and "on disk" are then the agent's own bytes: its layer and its index, at
  creation and once its edits are made.

Agent k starts on the k-th of N consecutive first-parent commits (the integration head moves on between
attempts) and edits a few tracked files, adds an untracked file and some ignored build output. "Written" is the
size of the files creation wrote (their mtime is after it started); "on disk" is one worktree's size. Medians.
The time of `git rev-parse HEAD` tells how loaded the machine was.

With `--baseline REV` plait's pool is also measured with the code of commit REV (checked out with `git worktree
add`, first on PYTHONPATH, in a process of its own), the two versions taking turns run by run for `--rounds`.

Run: .venv/bin/python benchmarks/bench_worktrees.py [--source MIRROR] [--agents 10] [--json]
     [--baseline REV [--rounds 1]] [--no-plain]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plait.run._opening import make_worktree, pool_of
from plait.workspace import Repo, Worktree
from plait.workspace._pool import empty, give_back

try:
    from plait.workspace._layers import remove_bases
    from plait.workspace._mounts import LAYER, can_layer
except ImportError:  # a baseline from before layered worktrees
    LAYER = ""

MIRRORS = Path("/work/.mirror")
RUN = "bench"
LAYERED = "bench-layered"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _source(given: str | None) -> Path:
    if given:
        return Path(given)
    preferred = MIRRORS / "git+git" / "repo"
    if preferred.is_dir():
        return preferred
    mirrors = [m / "repo" for m in MIRRORS.iterdir() if (m / "repo").is_dir()]
    return max(mirrors, key=lambda m: sum(f.stat().st_size for f in m.rglob("*") if f.is_file()))


def _size(path: Path, since_ns: int = 0) -> int:
    total = 0
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            st = (Path(root) / name).lstat()
            if st.st_mtime_ns >= since_ns:
                total += st.st_size
    return total


def _work(path: Path, k: int) -> None:
    """What an agent leaves: edits, a new file, build output git ignores."""
    tracked = [p for p in _git(path, "ls-files", "*.c").split()[::97][:5]]
    for name in tracked:
        with (path / name).open("a") as f:
            f.write(f"/* agent {k} */\n")
    (path / f"agent-{k}.txt").write_text("new\n")
    build = path / "build-output"
    build.mkdir(exist_ok=True)
    for i in range(50):
        (build / f"o{i}.o").write_bytes(b"\0" * 4096)


def _cpu_ms() -> float:
    """CPU time of this process and of the processes it waited for (git), in ms."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime) * 1000


def _timed(fn: Callable[[], object], cpu: list[float] | None = None) -> float:
    start, used = time.perf_counter(), _cpu_ms()
    fn()
    if cpu is not None:
        cpu.append(_cpu_ms() - used)
    return (time.perf_counter() - start) * 1000


def _plain(clone: Path, path: Path, k: int, base: str, into: dict[str, list[float]]) -> None:
    start = time.time_ns()
    into["create"].append(_timed(lambda: _git(clone, "worktree", "add", "-q", "-b", f"plain/{k}", str(path), base)))
    into["written"].append(_size(path, start))
    into["disk"].append(_size(path))
    _work(path, k)
    into["remove"].append(_timed(lambda: _git(clone, "worktree", "remove", "--force", str(path))))


def _pooled(repo: Repo, k: int, base: str, into: dict[str, list[float]]) -> None:
    where = pool_of(repo, RUN) / f"t{k}"
    start = time.time_ns()
    made: list[Worktree] = []
    branch = f"plait/{RUN}/t{k}"
    make = lambda: made.append(make_worktree(repo, where, branch, base, fresh=True, run_id=RUN))  # noqa: E731
    into["create"].append(_timed(make, into["create_cpu"]))
    into["written"].append(_size(where, start))
    into["disk"].append(_size(where))
    _work(where, k)
    time.sleep(1.1)  # an agent works longer than git's one-second racy window; see `_pool.give_back`
    into["remove"].append(_timed(lambda: give_back(made[0], pool_of(repo, RUN)), into["remove_cpu"]))


def _own(repo: Repo, path: Path) -> int:
    """A layered worktree's own bytes: its layer (what its agent wrote) and its index."""
    layer = path.parent / f"{LAYER}{path.name}"
    files = [Path(root) / name for root, _, names in os.walk(layer) for name in names]
    index = Path(repo.location(path)["GIT_DIR"]) / "index"
    return sum(f.lstat().st_size for f in files) + index.stat().st_size


def _layered(repo: Repo, k: int, base: str, into: dict[str, list[float]]) -> None:
    where = pool_of(repo, LAYERED) / f"t{k}"
    made: list[Worktree] = []
    branch = f"plait/{LAYERED}/t{k}"
    make = lambda: made.append(  # noqa: E731
        make_worktree(repo, where, branch, base, fresh=True, run_id=LAYERED, layered=True)
    )
    into["create"].append(_timed(make, into["create_cpu"]))
    into["written"].append(_own(repo, where))
    _work(where, k)
    into["disk"].append(_own(repo, where))
    into["remove"].append(_timed(lambda: made[0].remove(), into["remove_cpu"]))


def bench(source: Path, agents: int, plain: bool = True) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-worktrees-") as tmp:
        clone = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(source), str(clone)], check=True)
        (clone / ".git" / "info").mkdir(exist_ok=True)
        (clone / ".git" / "info" / "exclude").write_text("build-output/\n")
        repo = Repo.discover(clone)
        bases = _git(clone, "rev-list", "--first-parent", f"-n{agents}", "HEAD").split()[::-1]
        files = len(_git(clone, "ls-tree", "-r", "--name-only", bases[-1]).splitlines())
        rows: dict[str, dict[str, list[float]]] = {
            m: {"create": [], "remove": [], "written": [], "disk": [], "create_cpu": [], "remove_cpu": []}
            for m in ("git", "plait", "layered")
        }
        layered = bool(LAYER) and can_layer(pool_of(repo, LAYERED))
        for k, base in enumerate(bases):
            if plain:
                _plain(clone, Path(tmp) / "plain" / f"a{k}", k, base, rows["git"])
            _pooled(repo, k, base, rows["plait"])
            if layered:
                _layered(repo, k, base, rows["layered"])
        end = _timed(lambda: empty(repo, pool_of(repo, RUN)))
        bases_removed = _timed(lambda: remove_bases(pool_of(repo, LAYERED))) if layered else None
        spawn = statistics.median(_timed(lambda: _git(clone, "rev-parse", "HEAD")) for _ in range(9))
        shutil.rmtree(Path(tmp) / "plain", ignore_errors=True)
    med = {m: {k: statistics.median(v) for k, v in r.items() if v} for m, r in rows.items()}
    reused = rows["plait"]["create"][1:]
    return {
        "source": str(source),
        "files": files,
        "agents": agents,
        "load": os.getloadavg()[0],
        "git_rev_parse_ms": spawn,
        "median": med,
        "plait_reused_create_ms": statistics.median(reused) if reused else None,
        "plait_reused_create_cpu_ms": statistics.median(rows["plait"]["create_cpu"][1:]) if reused else None,
        "plait_reused_written_bytes": statistics.median(rows["plait"]["written"][1:]) if reused else None,
        "plait_first_create_ms": rows["plait"]["create"][0],
        "plait_pool_emptied_ms": end,
        "plait_remove_amortised_ms": statistics.mean(rows["plait"]["remove"]) + end / agents,
        "layered_create_ms": statistics.median(rows["layered"]["create"][1:]) if layered else None,
        "layered_create_cpu_ms": statistics.median(rows["layered"]["create_cpu"][1:]) if layered else None,
        "layered_first_create_ms": rows["layered"]["create"][0] if layered else None,
        "layered_base_removed_ms": bases_removed,
        "raw": rows,
    }


def baseline(rev: str, source: Path, agents: int) -> dict[str, Any]:
    """The pool measured with commit `rev`'s code, in a process of its own."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="bench-worktrees-baseline-") as tmp:
        where = Path(tmp) / "src"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), rev], cwd=root, check=True)
        try:
            env = {**os.environ, "PYTHONPATH": str(where / "src")}
            cmd = [sys.executable, __file__, "--json", "--no-plain", "--source", str(source), "--agents", str(agents)]
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=root, check=False)
    result: dict[str, Any] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="a local clone or mirror to clone from (default: git/git's mirror)")
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-plain", action="store_true", help="leave out plain `git worktree add`")
    parser.add_argument("--baseline", help="a commit whose pool is measured too (git worktree add)")
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline: runs of each version, taking turns")
    args = parser.parse_args()
    source = _source(args.source)
    if args.json:
        print(json.dumps(bench(source, args.agents, plain=not args.no_plain), indent=2))
        return
    runs: list[tuple[str, dict[str, Any]]] = []
    for n in range(args.rounds if args.baseline else 1):
        if args.baseline:
            runs.append((f"plait before ({args.baseline})", baseline(args.baseline, source, args.agents)))
        runs.append(("plait", bench(source, args.agents, plain=not args.no_plain and n == 0)))
    out = runs[-1][1] if not args.baseline else next(r for label, r in runs if label == "plait")
    print(
        f"{out['source']}: {out['files']} files, {out['agents']} agents one after another, load {out['load']:.1f},"
        f" `git rev-parse HEAD` {out['git_rev_parse_ms']:.0f} ms"
    )
    print(
        "| per agent | create (ms) | create, CPU (ms) | remove (ms) | remove, CPU (ms) | written (MB) | on disk (MB) |"
    )
    print("|---|---|---|---|---|---|---|")
    if out["median"]["git"]:
        m = out["median"]["git"]
        print(
            f"| `git worktree add` / `remove` | {m['create']:.0f} | | {m['remove']:.0f} | | {m['written'] / 1e6:.1f} |"
            f" {m['disk'] / 1e6:.1f} |"
        )
    for label, r in runs:
        m = r["median"]["plait"]
        print(
            f"| {label}, recycled (first agent {r['plait_first_create_ms']:.0f} ms, pool emptied"
            f" {r['plait_pool_emptied_ms']:.0f} ms) | {r['plait_reused_create_ms']:.0f}"
            f" | {r.get('plait_reused_create_cpu_ms') or 0:.0f} | {m['remove']:.0f} | {m.get('remove_cpu', 0):.0f}"
            f" | {r['plait_reused_written_bytes'] / 1e6:.2f} | {m['disk'] / 1e6:.1f} |"
        )
    if out.get("layered_create_ms") is not None:
        m = out["median"]["layered"]
        print(
            f"| plait, layered (first agent, with the shared checkout, {out['layered_first_create_ms']:.0f} ms;"
            f" shared checkout deleted {out['layered_base_removed_ms']:.0f} ms) | {out['layered_create_ms']:.0f}"
            f" | {out['layered_create_cpu_ms']:.0f} | {m['remove']:.0f} | {m['remove_cpu']:.0f}"
            f" | {m['written'] / 1e6:.2f} | {m['disk'] / 1e6:.2f} (its own, after its edits) |"
        )


if __name__ == "__main__":
    main()
