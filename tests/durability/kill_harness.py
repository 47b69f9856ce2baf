"""Aimed kills of a real `plait` process: a `git` on PATH that kills at a given subcommand, and a log watcher.

plait runs git by name from PATH (`plait.workspace.gitcall`), so a script named `git`, first on the PATH
plait gets, sees every git command it runs. The script runs the real git, then, when the command is the one
aimed at (its words start with `KILL_GIT`, it is the `KILL_NTH`-th such, and the event `KILL_AFTER` is in the
log, if set), kills its own process group: plait, every process it started in that group, and itself (before
running the command instead, with `KILL_BEFORE`, and then holding the lock git takes on the branch the
command creates, with `KILL_LOCK`: the state a git killed in the middle of it leaves). It logs every
command to `GIT_LOG`, so a failing test can show what plait was doing when it died.

The other way to aim is `kill_on_event`: poll the event log read-only and kill the group as soon as a row
matching an SQL condition appears.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

DEMO = resources.files("plait.demo")
MARKER = "PLAIT_KILL_SUITE_RUN"
"""Set in every plait process a test starts; a process still carrying it after the test is a survivor."""

_GIT = r"""#!/bin/bash
args=("$@")
i=0
while [ $i -lt ${#args[@]} ]; do
  case "${args[$i]}" in
    -c|-C) i=$((i + 2)) ;;
    -*) i=$((i + 1)) ;;
    *) break ;;
  esac
done
words="${args[*]:$i}"
[ -n "$GIT_LOG" ] && echo "$$ $words" >> "$GIT_LOG"
fire=""
if [ -n "$KILL_GIT" ] && [[ "$words" == "$KILL_GIT"* ]]; then
  seen=1
  if [ -n "$KILL_AFTER" ]; then
    seen=$(sqlite3 "file:$EVENTS_DB?mode=ro" "SELECT count(*) FROM events WHERE kind = '$KILL_AFTER'" 2>/dev/null)
  fi
  if [ "${seen:-0}" -gt 0 ]; then
    n=$(
      {
        flock 9
        n=$(( $(cat "$KILL_COUNT" 2>/dev/null || echo 0) + 1 ))
        echo $n > "$KILL_COUNT"
        echo $n
      } 9>>"$KILL_COUNT.flock"
    )
    [ "$n" -eq "${KILL_NTH:-1}" ] && fire=1
  fi
fi
if [ -n "$fire" ] && [ -n "$KILL_BEFORE" ]; then
  if [ -n "$KILL_LOCK" ]; then
    branch=""
    for ((j = i; j < ${#args[@]} - 1; j++)); do
      case "${args[$j]}" in -b|-B) branch="${args[$((j + 1))]}" ;; esac
      [ "${args[$i]}" = branch ] && [ "${args[$j]}" = "--" ] && branch="${args[$((j + 1))]}"
    done
    lock="$("$REAL_GIT" rev-parse --git-common-dir)/refs/heads/$branch.lock"
    mkdir -p "$(dirname "$lock")" && : > "$lock"
    words="$words (holding $branch's lock)"
  fi
  echo "before $words" > "$KILL_FIRED"
  kill -KILL 0
fi
"$REAL_GIT" "$@"
rc=$?
if [ -n "$fire" ]; then
  echo "after $words" > "$KILL_FIRED"
  kill -KILL 0
fi
exit $rc
"""


@dataclass(frozen=True)
class GitAim:
    """Kill plait right after the `nth` git command whose words start with `words`, once `after` is logged."""

    words: str
    nth: int = 1
    after: str = ""
    before: bool = False
    """Kill before the command runs rather than right after it."""
    lock: bool = False
    """Before the kill, take the lock of the branch the command creates (`-b`/`-B`, or `git branch ... -- <name>`),
    as a git killed mid-way does."""


def environment(tmp: Path, concurrency: int) -> dict[str, str]:
    """The environment of every process of a test: a `git` that can kill first on PATH, a home of its own."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "git"
    wrapper.write_text(_GIT)
    wrapper.chmod(0o755)
    real = shutil.which("git")
    assert real is not None, "git is not on PATH"
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {
        "PATH": path,
        "REAL_GIT": real,
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PLAIT_CONCURRENCY": str(concurrency),
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_LOG": str(tmp / "git.log"),
        MARKER: str(tmp),
        # carried, so that the suite can check another tree of plait's sources than the installed one
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
    }


def aimed(env: dict[str, str], repo: Path, aim: GitAim | None) -> dict[str, str]:
    """`env` for a plait process that the git wrapper kills at `aim` (none: it is never killed by git)."""
    out = {k: v for k, v in env.items() if not k.startswith("KILL_")}
    if aim is None:
        return out
    tmp = Path(env[MARKER])
    count = tmp / f"kill-count-{time.monotonic_ns()}"
    out.update(
        KILL_GIT=aim.words,
        KILL_NTH=str(aim.nth),
        KILL_AFTER=aim.after,
        KILL_BEFORE="1" if aim.before or aim.lock else "",
        KILL_LOCK="1" if aim.lock else "",
        KILL_COUNT=str(count),
        KILL_FIRED=str(tmp / "kill-fired"),
        EVENTS_DB=str(events_db(repo)),
    )
    return out


def git(cwd: Path, *args: str) -> str:
    """The real git's output (the tests' own git calls never go through the wrapper)."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def project(where: Path, env: dict[str, str]) -> Path:
    """The demo's project, committed on `main`."""
    with resources.as_file(DEMO / "repo") as source:
        shutil.copytree(source, where, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    real = {**env, "PATH": os.pathsep.join(env["PATH"].split(os.pathsep)[1:])}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "tally"]):
        subprocess.run(["git", *args], cwd=where, env=real, check=True, capture_output=True)
    return where


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def plait(args: list[str], repo: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """A `plait` process in a session (and process group) of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "plait", *args, "-C", str(repo)],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )


def events_db(repo: Path) -> Path:
    return repo / ".git" / "plait" / "events.db"


def query(repo: Path, sql: str) -> list[tuple[object, ...]]:
    """Rows of the event log, read-only; none while the log does not exist yet."""
    if not events_db(repo).exists():
        return []
    db = sqlite3.connect(f"file:{events_db(repo)}?mode=ro", uri=True, timeout=5)
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError:  # the table is not created yet
        return []
    finally:
        db.close()


def wait_for_event(proc: subprocess.Popen[str], repo: Path, where: str, nth: int = 1) -> bool:
    """Wait until `nth` events match the SQL condition `where` (True), or `proc` ends first (False)."""
    sql = f"SELECT count(*) FROM events WHERE {where}"
    while proc.poll() is None:
        rows = query(repo, sql)
        if rows and int(str(rows[0][0])) >= nth:
            return True
        time.sleep(0.005)
    return False


def kill_on_event(proc: subprocess.Popen[str], repo: Path, where: str, nth: int = 1) -> str:
    """Kill `proc`'s group once `nth` events match the SQL condition `where`; what the last logged event was.

    Fails, with what plait said, when the process ended before that.
    """
    if not wait_for_event(proc, repo, where, nth):
        code, out, err = wait(proc)
        raise AssertionError(f"plait ended ({code}) before the aimed event {where}: {(err or out)[-1500:]}")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    last = query(repo, "SELECT kind FROM events ORDER BY seq DESC LIMIT 1")
    return str(last[0][0]) if last else "start"


def wait(proc: subprocess.Popen[str], timeout: float = 300) -> tuple[int, str, str]:
    """Wait for `proc` to end: its exit code (-9 when killed), its output and its errors."""
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _environ_has(pid: str, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


def _cwd_under(pid: str, root: Path) -> bool:
    try:
        return Path(f"/proc/{pid}/cwd").readlink().is_relative_to(root)
    except OSError:
        return False


def _state(pid: str) -> str:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "gone"
    return data[data.rfind(b")") + 2 :].split()[0].decode()


def survivors(tmp: Path) -> dict[int, str]:
    """Live processes (zombies aside) of the test's runs: carrying its marker or working under its directory."""
    marker = f"{MARKER}={tmp}".encode()
    found: dict[int, str] = {}
    for entry in os.scandir("/proc"):
        pid = entry.name
        if not pid.isdigit() or int(pid) == os.getpid() or _state(pid) in ("Z", "gone"):
            continue
        if _environ_has(pid, marker) or _cwd_under(pid, tmp):
            try:
                found[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
            except OSError:
                continue
    return found


def settle_survivors(tmp: Path, within: float = 5.0) -> dict[int, str]:
    """The test's processes still alive `within` seconds from now (a killed process takes a moment to go)."""
    deadline = time.monotonic() + within
    while (left := survivors(tmp)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def leftovers(repo: Path) -> dict[str, list[str]]:
    """What a finished run may have left behind: worktrees, plait's refs, lock files, worktree directories."""
    run_dirs = repo / ".git" / "plait" / "worktrees"
    return {
        "worktrees": git(repo, "worktree", "list").splitlines()[1:],
        "refs": sorted(git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/plait", "refs/plait").split()),
        "locks": sorted(
            str(p.relative_to(repo)) for p in (repo / ".git").rglob("*.lock") if p.name != "worktrees.lock"
        ),
        "worktree dirs": sorted(str(p.relative_to(run_dirs)) for p in run_dirs.glob("*/*")),
    }


def run_id(repo: Path) -> str:
    rows = query(repo, "SELECT run_id FROM events WHERE kind = 'run_started' ORDER BY seq LIMIT 1")
    return str(rows[0][0]) if rows else ""
