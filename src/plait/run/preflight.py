"""The verify command, run once at the base before anything is spent: a command that cannot run is a configuration
error, found here rather than by every gate after the agents were paid.

    the gate's check of its base (sandboxed) ─► passes: the gate holds every failure against the work
                                           ─► fails: the gate keeps the base's run, and does not hold its failures
                                           ─► cannot run (126, 127, a refusal, no such module): ConfigError

The answer is a `VerifyChecked` event keyed by the base commit and the command: a resumed run reads it back.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plait.errors import ConfigError
from plait.events.runlog import RunLog
from plait.events.types import RunFinished, VerifyChecked
from plait.reconcile.gate import Gate
from plait.reconcile.verdict import last_line
from plait.workspace import CommandResult, cap_output

__all__ = ["Preflight", "preflight"]

State = Literal["none", "passes", "fails", "cannot-run"]

_NOT_RUN = (126, 127)
_STATUS = re.compile(r"\[(?:exit (-?\d+|None)|timed out)\]")
_SHELL = re.compile(r"^\S*sh: (?:line \d+: )?(?:\d+: )?")
_MISSING = re.compile(r"(?:(?P<interp>/[^\s:]+): bad interpreter|(?P<exe>[^\s:]+): (?:command not found|not found))")
_NO_FILE = re.compile(r"(?P<exe>[^\s:]+): No such file or directory\s*$")
_REFUSED = ("plait did not run this command: ", "plait could not confine this command")
_NO_MODULE = re.compile(r"No module named (?P<module>[\w.]+)")


@dataclass(frozen=True)
class Preflight:
    """What the verify command did at the base: `line` says it in one line."""

    command: str
    state: State
    line: str
    cached: bool = False


def _shown(command: str) -> str:
    text = " ".join(command.split())
    return text if len(text) <= 200 else text[:199] + "…"


def _hint(exe: str) -> str:
    """What to do about a program the sandbox could not find, from whether this machine has it."""
    named = exe.startswith("/") or (bool(exe) and "/" not in exe)
    found = exe if exe.startswith("/") else shutil.which(exe) if named else None
    if found and Path(found).exists():
        where = Path(found).parent
        where = where.parent if where.name == "bin" else where
        return (
            f"{found} is outside what the sandbox shows: add a read+allow path rule for {where} (sandbox.paths), "
            "or set verify_command"
        )
    if named:
        return f"{exe} is not on this machine either: install it, or set verify_command"
    return "is it under a hidden directory? add it with a read+allow path rule (sandbox.paths), or set verify_command"


def cannot_run(command: str, result: CommandResult) -> str | None:
    """Why `command` could not run at all, with what to do; None when it ran (and passed or failed)."""
    lines = [line.strip() for line in result.output.splitlines() if line.strip()]
    first = lines[0] if lines else f"exit {result.exit_code}"
    if result.exit_code == 126 and first.startswith(_REFUSED):
        reason = first.removeprefix(_REFUSED[0]).split(" Instead: ")[0]
        return f"{reason} (see `plait sandbox`, or set verify_command)"
    if result.exit_code in _NOT_RUN:
        for line in lines:
            said = _SHELL.sub("", line)
            found = _MISSING.search(said) or _NO_FILE.search(said)
            if found:
                return f"{said} ({_hint(found.groupdict().get('interp') or found['exe'])})"
        return f"{_SHELL.sub('', first)} ({_hint('')})"
    for line in lines if result.exit_code else []:
        module = _NO_MODULE.search(line)
        if module and re.search(rf"-m\s+{re.escape(module['module'])}\b", command):
            return (
                f"{_SHELL.sub('', line)} (is the interpreter's environment under a hidden directory? add it with a "
                "read+allow path rule (sandbox.paths), install the module, or set verify_command)"
            )
    return None


def _cached(log: RunLog, base: str, command: str) -> VerifyChecked | None:
    for event in log.events(kinds=["verify"]):
        if isinstance(event, VerifyChecked) and event.commit == base and event.command == command:
            if event.state != "cannot-run":
                return event
    return None


def _status(output: str) -> tuple[int | None, str]:
    """The exit status and the command's own output, from the gate's `$ command`, `[exit N]`, output."""
    lines = output.split("\n")
    for i, line in enumerate(lines):
        found = _STATUS.fullmatch(line.strip())
        if found:
            code = found.group(1)
            return (int(code) if code and code != "None" else None), "\n".join(lines[i + 1 :])
    return None, output


async def preflight(gate: Gate, log: RunLog, *, work: str = "the agents' work") -> Preflight:
    """Check the gate's base once per (base, command) in the log: the gate keeps the run for its comparisons.

    Raises `ConfigError` (after logging the run as failed) when the verify command cannot run in the sandbox.
    """
    command = await asyncio.to_thread(gate.command_for, gate.base) or ""
    seen = _cached(log, gate.base, command)
    if seen is not None:
        gate.base_fails = seen.state == "fails"
        return Preflight(command, seen.state, seen.decision, cached=True)
    if not command:
        line = "no verify command configured or detected: the gate checks syntax and cross-branch names only"
        _decide(log, gate.base, command, "none", line)
        return Preflight(command, "none", line)
    checked = await gate.check(gate.base)
    code, output = _status(checked.output)
    why = None if checked.passed else cannot_run(command, CommandResult(exit_code=code, output=output))
    if why is not None:
        line = f"verify command `{_shown(command)}` cannot run in the sandbox: {why}"
        _decide(log, gate.base, command, "cannot-run", line, output)
        reason = "stopped before any work: the verify command cannot run in the sandbox"
        log.append(RunFinished(run_id=log.run_id, status="failed", reason=reason))
        raise ConfigError(line)
    gate.base_fails = not checked.passed
    if checked.passed:
        line = f"verify command `{_shown(command)}` passes at the base; the gate runs it on {work}"
    else:
        status = "timed out" if code is None else f"exit {code}"
        line = (
            f"verify command `{_shown(command)}` already fails at the base ({status}: {last_line(output)}); the "
            f"gate does not hold the base's failures against {work}"
        )
    state: State = "passes" if checked.passed else "fails"
    _decide(log, gate.base, command, state, line)
    return Preflight(command, state, line)


def _decide(log: RunLog, base: str, command: str, state: State, line: str, output: str = "") -> None:
    shown = cap_output(output, 4000) if output else ""
    log.append(VerifyChecked(run_id=log.run_id, decision=line, commit=base, command=command, state=state, output=shown))
