"""`plait` commands started in the background for an MCP client: detached, in the repository, each found by its run.

A command's JSON result goes to `.git/plait/mcp/RUN.json` and its messages to `RUN.log`, so that a later status
(from this server or the next one) reads them. The run id is learnt from the run's lease, the row `plait run` and
`plait ask` hold with their pid while they work, or from a new run of the command's kind in the log (`plait
integrate` holds no lease), or, when the command ended before either was seen, from its JSON result.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

from plait.errors import EnvironmentProblem, ModelError, PlaitError, StateError, UsageError
from plait.workspace import Repo

__all__ = ["Finder", "Launched", "Launcher", "either", "failure", "lease_holder", "leased"]

Finder = Callable[[int], str | None]
"""Given the command's pid, the id of the run it started, once the log shows it."""

_ERROR = "plait: error: "
_EXIT = {2: UsageError, 3: EnvironmentProblem, 4: ModelError, 5: StateError}


def _leases(db: Path, sql: str, args: tuple[object, ...]) -> list[tuple[Any, ...]]:
    if not db.exists():
        return []
    try:
        con = sqlite3.connect(f"file:{pathname2url(str(db))}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()
    except sqlite3.Error:  # no lease table yet, or the log is being created
        return []


def lease_holder(db: Path) -> Finder:
    """The run whose lease (in the event log `db`) the process holds."""
    host = socket.gethostname()

    def find(pid: int) -> str | None:
        rows = _leases(db, "SELECT run_id FROM leases WHERE pid = ? AND host = ?", (pid, host))
        return str(rows[0][0]) if rows else None

    return find


def either(*finders: Finder) -> Finder:
    """The run the first of `finders` finds."""

    def find(pid: int) -> str | None:
        return next((run_id for f in finders if (run_id := f(pid))), None)

    return find


def leased(db: Path, run_id: str) -> bool:
    """Whether a live process of this machine holds the run's lease."""
    rows = _leases(db, "SELECT pid, host FROM leases WHERE run_id = ?", (run_id,))
    if not rows or rows[0][1] != socket.gethostname():
        return bool(rows)
    try:
        os.kill(int(rows[0][0]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Launched:
    run_id: str
    process: subprocess.Popen[bytes]


class Launcher:
    """Starts `plait` subcommands that outlive the request (and the server), and keeps what they print."""

    def __init__(self, repo: Repo, *, timeout_s: float = 60.0) -> None:
        self.repo, self.timeout_s = repo, timeout_s
        self.launched: dict[str, Launched] = {}

    @property
    def folder(self) -> Path:
        return self.repo.plait_dir() / "mcp"

    def start(self, args: list[str], stdin: str, find: Finder) -> str:
        """Run `plait ARGS` with `stdin` as its input, detached; returns its run id once it is known.

        Raises:
            PlaitError: The command failed before it started a run (its own one-line message), or named none
                in time.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = self.folder / f"starting-{secrets.token_hex(4)}"
        given, output, log = (stem.with_suffix(s) for s in (".in", ".json", ".log"))
        given.write_text(stdin, encoding="utf-8")
        argv = [sys.executable, "-m", "plait", *args]
        with given.open("rb") as fin, output.open("wb") as fout, log.open("wb") as ferr:
            # a session of its own: the client's Ctrl-C or the server's exit does not stop the run
            proc = subprocess.Popen(
                argv, cwd=self.repo.root, stdin=fin, stdout=fout, stderr=ferr, start_new_session=True
            )
        given.unlink()
        run_id = self._wait_for_run(proc, find, output, log)
        for path, suffix in ((output, ".json"), (log, ".log")):
            path.replace(self.folder / f"{run_id}{suffix}")
        self.launched[run_id] = Launched(run_id, proc)
        return run_id

    def _wait_for_run(self, proc: subprocess.Popen[bytes], find: Finder, output: Path, log: Path) -> str:
        deadline = time.monotonic() + self.timeout_s
        while True:
            run_id = find(proc.pid)
            if run_id:
                return run_id
            code = proc.poll()
            if code is not None:
                result = _json(output)
                if isinstance(result.get("run_id"), str):
                    return str(result["run_id"])
                said = _read(log)
                output.unlink(missing_ok=True)
                if _error_line(said):
                    log.unlink(missing_ok=True)
                raise failure(code, said, f"plait (its messages are in {log})")
            if time.monotonic() > deadline:
                raise StateError(
                    f"plait started (pid {proc.pid}) but named no run within {self.timeout_s:.0f}s: see {log}"
                )
            time.sleep(0.1)

    def result(self, run_id: str) -> dict[str, Any]:
        """What a command started here said at its end (its --json), and its error if it failed; {} if unknown."""
        if not run_id or run_id.startswith(".") or "/" in run_id:
            return {}
        proc = self.launched.get(run_id)
        code = proc.process.poll() if proc is not None else None
        data: dict[str, Any] = {}
        if proc is not None:
            data["process"] = {"pid": proc.process.pid, "running": code is None, "exit_code": code}
        result = _json(self.folder / f"{run_id}.json")
        if result:
            data["result"] = result
        error = _error_line(_read(self.folder / f"{run_id}.log"))
        if error and (code or proc is None):
            data["error"] = error
        return data

    def printing(self, run_id: str) -> bool:
        """Whether the command of `run_id`, started by this server or an earlier one, may still be writing its
        --json: the file is there, holds no result yet, and no process started here has ended without one."""
        if not run_id or run_id.startswith(".") or "/" in run_id or not (self.folder / f"{run_id}.json").exists():
            return False
        proc = self.launched.get(run_id)
        return (proc is None or proc.process.poll() is None) and not _json(self.folder / f"{run_id}.json")

    def running(self, run_id: str) -> bool:
        proc = self.launched.get(run_id)
        return proc is not None and proc.process.poll() is None

    def wait(self, run_id: str, seconds: float) -> None:
        """Wait up to `seconds` for the command of `run_id` (if started here) to end."""
        proc = self.launched.get(run_id)
        if proc is None or seconds <= 0:
            return
        try:
            proc.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read(log: Path) -> str:
    try:
        return log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _error_line(stderr: str) -> str:
    errors = [line.removeprefix(_ERROR) for line in stderr.splitlines() if line.startswith(_ERROR)]
    return errors[-1] if errors else ""


def failure(code: int, stderr: str, command: str) -> PlaitError:
    """The error a `plait` command that exited with `code` reported on `stderr`, as the same kind of error."""
    message = _error_line(stderr) or f"{command} exited with status {code}"
    return _EXIT.get(code, PlaitError)(message)
