"""Through the real CLI: secrets in the task, the environment and the model's replies never reach the bytes of
`.git/plait/events.db`, and a run interrupted after such a reply resumes to the end."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from cli_support import Plait

KEY = "sk-proj-Abc123def456ghi789jkl012"
PAT = "Zq8mN3xW7pL2vK9tR4yB6cJ1"
DB_PASSWORD = "hunter2pass"
URL_PASSWORD = "s3cr3tpass"
SECRET_ENV = {"GH_PAT": PAT, "DATABASE_URL": f"postgres://u:{DB_PASSWORD}@db.internal/app"}
SCRIPT = f"""
conversations:
  - match: "Deploy with the token"
    turns:
      - text: "I will try {KEY} with {DB_PASSWORD}; the mirror is https://bob:{URL_PASSWORD}@git.example.com/x.git"
        tool_calls: [{{name: run, arguments: {{command: "echo 'token {KEY}'"}}}}]
      - expect: "token [REDACTED]"
        tool_calls: [{{name: run, arguments: {{command: "echo two"}}}}]
      - delay: DELAY
        tool_calls: [{{name: finish, arguments: {{summary: "deployed with {PAT}"}}}}]
"""
"""Keyed by the count of assistant messages: a resumed agent gets the reply of the turn it is at."""
TASK = f"Deploy with the token {PAT} to postgres://u:{DB_PASSWORD}@db.internal/app"


def _kinds(db: Path) -> list[tuple[str, dict[str, object]]]:
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    try:
        return [(kind, json.loads(payload)) for kind, payload in con.execute("SELECT kind, payload FROM events")]
    except sqlite3.OperationalError:  # the schema is not written yet
        return []
    finally:
        con.close()


def _third_call_started(db: Path) -> bool:
    return any(kind == "model_request" and payload.get("call") == 3 for kind, payload in _kinds(db))


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_no_secret_reaches_the_log_and_the_interrupted_run_resumes(
    plait: Plait, project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / "secret.yaml"
    script.write_text(SCRIPT.replace("DELAY", "120"))
    db = project / ".git" / "plait" / "events.db"
    args = ["run", TASK, "--single", "--model", f"scripted:{script}", "--yes"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "plait", *args],
        cwd=project,
        env={**env, **SECRET_ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and not _third_call_started(db):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "plait resume" in err, err

    script.write_text(SCRIPT.replace("DELAY", "0"))
    resumed = plait("resume", "last", "--json", cwd=project, extra_env=SECRET_ENV)
    assert resumed.code == 0, resumed.err
    data = resumed.json()
    assert data["status"] == "done" and data["summary"] == "deployed with [REDACTED]"
    answered = [p["call"] for kind, p in _kinds(db) if kind == "model_response"]
    assert answered == [1, 2, 3]  # the replayed calls matched the log and were not paid again

    raw = b"".join(p.read_bytes() for p in db.parent.glob("events.db*"))
    for secret in (KEY, PAT, DB_PASSWORD, URL_PASSWORD):
        assert secret.encode() not in raw, secret
    assert b"postgres://u:[REDACTED]@db.internal/app" in raw
    shown = plait("show", "last", cwd=project, extra_env=SECRET_ENV)
    assert shown.code == 0 and "token [REDACTED]" in shown.out
