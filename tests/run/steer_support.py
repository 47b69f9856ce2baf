"""A real `plait run` of two tasks against a model server in the test process, held at chosen model calls.

`Gated` answers each agent's turns (read its file, rewrite it, finish); a call listed in `holds` waits until the
test releases it, so that a test acts while an agent is at a known point, without timing anything.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from plait.workspace import Repo

TASKS = ("alpha", "beta")
PLAN = {
    "mode": "parallel",
    "tasks": [
        {"id": name, "title": f"change {name}", "instructions": f"Make {name} return 1.", "writes": [f"{name}.py"]}
        for name in TASKS
    ],
}
_WAIT_S = 120.0


def _turns(name: str) -> list[dict[str, Any]]:
    rewritten = f"def {name}():\n    return 1\n"
    return [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"{name}.py"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": f"{name}.py", "content": rewritten}}]},
        {"tool_calls": [{"name": "finish", "arguments": {"summary": f"{name} returns 1"}}]},
    ]


def agent_of(body: dict[str, Any]) -> str:
    head = json.dumps(body.get("messages", [])[:2])
    return next((name for name in TASKS if f"Your task is `{name}`" in head), "")


def turn_of(body: dict[str, Any]) -> int:
    return sum(m.get("role") == "assistant" for m in body.get("messages", []))


def said_to(body: dict[str, Any]) -> str:
    """Every user message of the request, as one text."""
    return "\n".join(json.dumps(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")


@dataclass
class Hold:
    entered: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def wait(self) -> None:
        assert self.entered.wait(_WAIT_S), "the agent never reached the held model call"

    def release(self) -> None:
        self.released.set()


class Gated:
    """The reply function of the model server: each agent's script, held where the test says."""

    def __init__(self, *holds: tuple[str, int]) -> None:
        self.holds = {key: Hold() for key in holds}
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, fmt: str, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.bodies.append(body)
        agent, turn = agent_of(body), turn_of(body)
        hold = self.holds.get((agent, turn))
        if hold is not None and not hold.released.is_set():
            hold.entered.set()
            hold.released.wait(_WAIT_S)
        turns = _turns(agent)
        return turns[min(turn, len(turns) - 1)]

    def release_all(self) -> None:
        for hold in self.holds.values():
            hold.release()

    def requests(self, agent: str, turn: int) -> list[dict[str, Any]]:
        with self._lock:
            return [b for b in self.bodies if agent_of(b) == agent and turn_of(b) == turn]


def env(tmp: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "HOME": str(tmp / "home"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PLAIT_CONCURRENCY": "2",
        "PLAIT_MAX_ATTEMPTS": "2",
        **extra,
    }


def run_argv(repo: Repo, tmp: Path, url: str, *flags: str) -> list[str]:
    plan = tmp / "plan.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    args = ["run", "change alpha and beta", "--plan", str(plan), "--model", f"openai-compatible:m@{url}", "--yes"]
    return [sys.executable, "-m", "plait", *args, "--split", "always", "--no-tui", *flags, "-C", str(repo.root)]


def start(argv: list[str], environ: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv, env=environ, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


def kill(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def plait(repo: Repo, environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cut = args.index("--") if "--" in args else len(args)  # what follows `--` is a command's, not plait's
    argv = [sys.executable, "-m", "plait", *args[:cut], "-C", str(repo.root), *args[cut:]]
    return subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=300, check=False)


def events(repo: Repo) -> list[dict[str, Any]]:
    path = repo.root / ".git" / "plait" / "events.db"
    if not path.exists():
        return []
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT seq, payload FROM events ORDER BY seq").fetchall()
    except sqlite3.OperationalError:  # the run has not made its table yet
        rows = []
    finally:
        db.close()
    return [{"seq": seq, **json.loads(payload)} for seq, payload in rows]


def wait_for(repo: Repo, what: str, test: Any) -> dict[str, Any]:
    """The first logged event `test` accepts, once the run logged it (the log is read again until then)."""
    deadline = time.monotonic() + _WAIT_S
    while time.monotonic() < deadline:
        found = next((e for e in events(repo) if test(e)), None)
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError(f"the run never logged {what}")
