"""Time `plait resume` of a ~10,000-event run, from process start to its first new model call.

A real `plait run --plan` of TASKS agents in parallel talks to a model server in this process (the wire
server of the tests, OpenAI format). Every agent reads a file, step after step, and never finishes. Once the
server has answered CALLS model calls it stops answering, and the run's process group is killed: the log
ends mid-run, each agent's last call asked and unanswered. The killed repository (log and worktrees) is
saved, and restored to the same path before each measurement.

`plait resume last` is then started, and the server notes when the first request reaches it (the first
agent that replayed its past makes its first new call) and when every agent has made one. The resumed
process is then killed and the repository restored, and that is repeated REPEAT times per code version, the
versions taking turns. With `--workdir DIR` the killed run is kept in DIR and reused by the next invocation.

Versions: the working tree's `src` (or those `--src DIR` names, `--src` given once for each: a copy, when others
edit the working tree), and with `--baseline REV` that commit's `src` as well (checked out with `git worktree add`
into a temporary directory); the version's `src` is put first on PYTHONPATH of the resumed process. Every version
must ask its model what the recording's code asked (the same prompts and tools): one whose replay diverges stops
the benchmark.
The run is recorded with the baseline's code when there is one (else the measured `src`'s), so that a commit
which changed the prompts since an older recording can still be compared with the code it is measured against.

Besides wall time, the table gives the CPU seconds (user and system, its own threads, git's processes not
counted) that the resumed process had used when its first new call reached the server, read from `/proc`:
the figure a busy machine inflates least.

Run: .venv/bin/python benchmarks/bench_resume.py [--tasks 24] [--calls 2500] [--repeat 3] [--baseline REV]
     [--workdir DIR] [--profile FILE] [--src DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from wire_server import WireServer  # noqa: E402

_AGENT = re.compile(r"Your task is `([^`]+)`")


class Server:
    """Answers every agent with a `read_file`, turn after turn; holds every call once told to."""

    def __init__(self, tasks: int) -> None:
        self.tasks = tasks
        self.answered = 0
        self.limit: int | None = None
        self.released = threading.Event()
        self.lock = threading.Lock()
        self.first: dict[str, float] = {}
        self.all_live = threading.Event()
        self.any_live = threading.Event()
        self.pid = 0
        """The resumed process, whose CPU time the first request it sends reads (`cpu`)."""
        self.cpu = float("nan")

    def reset(self, limit: int | None, pid: int = 0) -> None:
        with self.lock:
            self.answered, self.limit, self.first, self.pid, self.cpu = 0, limit, {}, pid, float("nan")
        self.all_live.clear()
        self.any_live.clear()

    def __call__(self, fmt: str, body: dict[str, Any]) -> dict[str, Any]:
        now = time.perf_counter()
        messages = body.get("messages", [])
        text = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
        found = _AGENT.search(text)
        agent = found.group(1) if found else "?"
        turn = sum(m.get("role") == "assistant" for m in messages)
        with self.lock:
            if not self.first and self.pid:
                self.cpu = _cpu(self.pid)
            self.first.setdefault(agent, now)
            self.any_live.set()
            if len(self.first) >= self.tasks:
                self.all_live.set()
            held = self.limit is not None and self.answered >= self.limit
            self.answered += 0 if held else 1
        if held or self.limit is None:
            self.released.wait()
            return {"status": 503, "message": "the benchmark is over"}
        call = {"name": "read_file", "arguments": {"path": "notes.txt"}, "id": f"c{turn}"}
        return {"text": f"step {turn}", "tool_calls": [call], "usage": {"input_tokens": 100, "output_tokens": 10}}


def _cpu(pid: int) -> float:
    """CPU seconds (user and system, every thread) process `pid` has used so far, its children not counted."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _env(tmp: Path, tasks: int) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PLAIT_CONCURRENCY": str(tasks),
        "PLAIT_MAX_STEPS": "100000",
        "PLAIT_MAX_TOKENS": "1000000000",
        "GIT_AUTHOR_NAME": "B",
        "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "B",
        "GIT_COMMITTER_EMAIL": "b@example.invalid",
    }


def _project(repo: Path, env: dict[str, str], tasks: int) -> Path:
    repo.mkdir()
    (repo / "notes.txt").write_text("".join(f"line {i}\n" for i in range(40)))
    plan = {
        "mode": "parallel",
        "tasks": [{"id": f"t{i}", "title": f"task {i}", "writes": [f"t{i}.txt"]} for i in range(tasks)],
    }
    (repo.parent / "plan.json").write_text(json.dumps(plan))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def _plait(args: list[str], repo: Path, env: dict[str, str], profile: str = "") -> subprocess.Popen[bytes]:
    python = [sys.executable, "-m", "cProfile", "-o", profile] if profile else [sys.executable]
    return subprocess.Popen(
        [*python, "-m", "plait", *args, "-C", str(repo)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(repo.parent / "plait.err").open("ab"),  # progress lines: a pipe nobody reads would fill and block
        start_new_session=True,
    )


def _tail(repo: Path) -> str:
    return (repo.parent / "plait.err").read_text(errors="replace")[-2000:]


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def _events(repo: Path) -> int:
    db = sqlite3.connect(repo / ".git" / "plait" / "events.db")
    try:
        return int(db.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    finally:
        db.close()


def record(tmp: Path, server: Server, url: str, tasks: int, calls: int, src: Path) -> None:
    """Run `src`'s code until `calls` model calls were answered, kill it, and save the repository next to `tmp`."""
    env = {**_env(tmp, tasks), "PYTHONPATH": str(src)}
    repo = _project(tmp / "repo", env, tasks)
    server.reset(calls)
    proc = _plait(["run", "bench", "--plan", str(tmp / "plan.json"), "--model", url, "--yes"], repo, env)
    while server.answered < calls and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)  # the last answers are logged; every agent's next call is held at the server
    _kill(proc)
    if server.answered < calls:
        raise SystemExit(f"the run ended after {server.answered} calls: {_tail(repo)}")
    shutil.copytree(tmp, tmp.parent / "saved", symlinks=True)


def _restore(tmp: Path, saved: Path, url: str) -> None:
    """The killed run as it was saved, its model served by this process's server (on a port of its own)."""
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(saved, tmp, symlinks=True)
    db = sqlite3.connect(tmp / "repo" / ".git" / "plait" / "events.db")
    with db:
        seq, payload = db.execute("SELECT seq, payload FROM events WHERE kind = 'run_started'").fetchone()
        data = json.loads(payload)
        data["model"] = url
        db.execute("UPDATE events SET payload = ? WHERE seq = ?", (json.dumps(data), seq))
    db.close()


def resume_once(
    tmp: Path, saved: Path, server: Server, tasks: int, src: Path, url: str, profile: str = ""
) -> tuple[float, float, float]:
    """Seconds from the start of `plait resume` to its first new model call and to every agent's first one, and
    the CPU seconds the resumed process had used when its first new call reached the server."""
    _restore(tmp, saved, url)
    env = {**_env(tmp, tasks), "PYTHONPATH": str(src)}
    server.reset(None)
    started = time.perf_counter()
    proc = _plait(["resume", "last"], tmp / "repo", env, profile)
    server.pid = proc.pid
    try:
        if not server.all_live.wait(300):
            raise SystemExit(f"the resumed run made no new call: {_tail(tmp / 'repo')}")
        if profile:  # Ctrl-C: plait stops, and the profiler writes what it saw
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(60)
    finally:
        _kill(proc)
    if _diverged(tmp / "repo"):
        raise SystemExit(f"{src} asks its model something else than the recorded run: record one with its code")
    return min(server.first.values()) - started, max(server.first.values()) - started, server.cpu


def _diverged(repo: Path) -> bool:
    """Whether an agent stopped because its replay asked something else than the log (the prompts changed): its
    task's next attempt then starts afresh, and the resume measured no replay."""
    db = sqlite3.connect(repo / ".git" / "plait" / "events.db")
    try:
        rows = db.execute("SELECT payload FROM events WHERE kind = 'task_finished'").fetchall()
    finally:
        db.close()
    return any("asks something else" in payload for (payload,) in rows)


def _load() -> str:
    """The machine's load average over 1, 5 and 15 minutes: the resumes share its processors with whatever runs."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _short(src: Path) -> str:
    """A `--src` directory named in the table: its last two parts."""
    return "/".join(src.parts[-2:])


def _baseline_src(rev: str, tmp: Path) -> Path:
    where = tmp / "baseline"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), rev], cwd=ROOT, check=True)
    return where / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=24, help="agents working in parallel (a plan holds 24 at most)")
    parser.add_argument("--calls", type=int, default=2500, help="model calls answered before the kill")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="a commit whose code is measured too (git worktree add)")
    parser.add_argument(
        "--profile", default="", help="after the timed resumes, one more per version under cProfile, to FILE.0, FILE.1"
    )
    parser.add_argument("--workdir", type=Path, help="keep the killed run here, and reuse it when it is there")
    parser.add_argument(
        "--src", type=Path, action="append", help="code measured, may be given again (default: the working tree's)"
    )
    args = parser.parse_args()
    server = Server(args.tasks)
    with tempfile.TemporaryDirectory() as t, WireServer(server) as wire:
        work = (args.workdir or Path(t)).resolve()
        tmp, saved = work / "run", work / "saved"
        url = f"openai-compatible:bench@{wire.openai_url}"
        srcs = [s.resolve() for s in args.src or [ROOT / "src"]]
        versions = {"working tree" if s == ROOT / "src" else _short(s): s for s in srcs}
        if args.baseline:
            versions = {f"baseline {args.baseline}": _baseline_src(args.baseline, Path(t)), **versions}
        try:
            if not saved.exists():
                tmp.mkdir(parents=True, exist_ok=True)
                record(tmp, server, url, args.tasks, args.calls, next(iter(versions.values())))
            events = _events(saved / "repo")
            print(f"run: {args.tasks} agents, {events:,} events, killed mid-run; {args.repeat} resumes per version")
            print(f"load average at the start: {_load()}")
            for src in versions.values():  # no version's first resume pays for compiling its bytecode
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, capture_output=True)
            times: dict[str, list[tuple[float, float, float]]] = {label: [] for label in versions}
            for _ in range(args.repeat):  # the versions take turns, so that a busy spell of the machine hits both
                for label, src in versions.items():
                    times[label].append(resume_once(tmp, saved, server, args.tasks, src, url))
            print("medians: wall seconds to the first new call and to every agent's; CPU seconds at the first")
            print(f"{'code':<28} {'first new call':>15} {'CPU at it':>10} {'every agent live':>17}")
            for label, measured in times.items():
                first, every, cpu = (statistics.median(t[i] for t in measured) for i in range(3))
                print(f"{label:<28} {first:>14.2f}s {cpu:>9.2f}s {every:>16.2f}s", flush=True)
            print(f"load average at the end: {_load()}")
            for i, src in enumerate(versions.values() if args.profile else ()):  # FILE.0 the first version...
                resume_once(tmp, saved, server, args.tasks, src, url, f"{Path(args.profile).resolve()}.{i}")
        finally:
            server.released.set()
            if args.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(Path(t) / "baseline")], cwd=ROOT)


if __name__ == "__main__":
    main()
