"""A verify command's output, read test by test: which tests failed, and whether the whole suite ran.

pytest's short test summary (`FAILED id - message`, `ERROR id`, on by default) and its closing counts
line, or unittest's `FAIL: name (dotted.id)` headers and `Ran N tests`, give the failing tests by name.
A report is trusted only when the names found agree with the counts (output cut in the middle loses
some); otherwise there is no report and the gate judges the exit status alone. A pytest run stopped at
its first failures (`-x`, `--maxfail`) or interrupted by collection errors is not complete: the gate runs
it again with the failures it knows deselected (`deselecting`) to learn the rest.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = ["Report", "deselecting", "read_report", "test_file"]

_PYTEST_LINE = re.compile(r"^(FAILED|ERROR) (\S.*)$")
_PYTEST_COUNTS = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s(?: \([^)]*\))?\s*=*$")
_PYTEST_STOPPED = re.compile(r"^!+ (stopping after \d+ failures|Interrupted: .*) !+$")
_UNITTEST_HEAD = re.compile(r"^(FAIL|ERROR): (\S+) \(([\w.]+)\)")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ")
_UNITTEST_VERDICT = re.compile(r"^(OK|FAILED)\b(?: \((.*)\))?")


@dataclass(frozen=True)
class Report:
    """The tests a run saw fail, and whether it ran the whole suite (not stopped at its first failures)."""

    failed: frozenset[str]
    complete: bool = True
    runner: str = "pytest"


def _node_id(rest: str) -> str:
    """The node id at the start of `rest`: up to the first ' - ' outside brackets (`test_p[a - b] - msg`)."""
    depth = 0
    for i, char in enumerate(rest):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        elif depth == 0 and rest.startswith(" - ", i):
            return rest[:i]
    return rest.rstrip()


def _counts(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for part in text.split(", "):
        number, _, word = part.partition(" ")
        if number.isdigit():
            key = "error" if word in ("error", "errors") else word
            found[key] = found.get(key, 0) + int(number)
    return found


def _pytest(lines: list[str]) -> Report | None:
    counts = next((_counts(m.group(1)) for line in reversed(lines) if (m := _PYTEST_COUNTS.match(line))), None)
    if counts is None:
        return None
    failed: list[str] = []
    errors: list[str] = []
    for line in lines:
        if m := _PYTEST_LINE.match(line):
            (failed if m.group(1) == "FAILED" else errors).append(_node_id(m.group(2)))
    if len(failed) != counts.get("failed", 0) or len(errors) != counts.get("error", 0):
        return None  # the summary was cut, or is not on (-r without f and E)
    stopped = any(_PYTEST_STOPPED.match(line) for line in lines)
    return Report(frozenset(failed + errors), complete=not stopped, runner="pytest")


def _unittest(lines: list[str]) -> Report | None:
    if not any(_UNITTEST_RAN.match(line) for line in lines):
        return None
    verdict = next((m for line in reversed(lines) if (m := _UNITTEST_VERDICT.match(line))), None)
    if verdict is None:
        return None
    counts = {k: int(v) for k, _, v in (p.partition("=") for p in (verdict.group(2) or "").split(", ")) if v}
    heads = [f"{m.group(3)}" for line in lines if (m := _UNITTEST_HEAD.match(line))]
    if len(heads) != counts.get("failures", 0) + counts.get("errors", 0):
        return None
    return Report(frozenset(heads), complete=True, runner="unittest")


def read_report(output: str) -> Report | None:
    """The failing tests named in a pytest or unittest run's output, or None when it cannot be read as one."""
    lines = output.splitlines()
    return _pytest(lines) or _unittest(lines)


def deselecting(command: str, tests: Iterable[str]) -> str:
    """`command` with pytest told to leave `tests` out (a test file that failed to collect is ignored)."""
    options = [f"--ignore={t}" if "::" not in t else f"--deselect={t}" for t in sorted(tests)]
    value = " ".join(shlex.quote(o) for o in options)
    return f"export PYTEST_ADDOPTS={shlex.quote(value)}\n{command}"


def test_file(test: str, files: Collection[str]) -> str | None:
    """The file (of `files`) a test named in a report lives in, when it can be told."""
    if "::" in test or test.endswith(".py"):
        path = test.split("::", 1)[0]
        return path if path in files else None
    parts = test.split(".")  # unittest's dotted id: package.module.Class.method
    for end in range(len(parts) - 1, 0, -1):
        stem = "/".join(parts[:end])
        for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
            match = next((f for f in files if f == candidate or PurePosixPath(f).match(f"*/{candidate}")), None)
            if match:
                return match
    return None
