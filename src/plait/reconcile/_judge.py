"""What the verify stage holds against a commit: the failures it introduces where it lands, as the plan sees them.

    held against it:  a test that passed where it lands and fails now (unless the plan defers it),
                      a failing test in a test file it changed (its own tests: never deferred),
                      a test the plan left for it to make pass (`owed`) that still fails
    deferred:         a test in a file it did not change that passed before and fails now, when tasks
                      planned to build on it are still to come (`defer`): they must make it pass
    not held:         a test that already failed where it lands

Without a per-test report on both sides, the exit status decides: a failure where the landing point
passed is the commit's (deferred under `defer`), a failure shared with the landing point is not held,
unless the landing owes tests, which then cannot be shown to pass.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from plait.reconcile._testrun import Report, test_file

__all__ = ["ALL", "STRICT", "Allowance", "Verdict", "by_exit_status", "by_test"]

ALL = "*"
"""Stands for the verify command as a whole when its output names no tests."""
_SHOWN = 8


@dataclass(frozen=True)
class Allowance:
    """What the plan allows a commit landing on the integration branch."""

    defer: bool = False
    """Tasks planned to build on it are still to come: tests it breaks outside its own test files may wait for them."""
    owed: frozenset[str] = frozenset()
    """Tests (or `ALL`) that earlier tasks left failing for this landing to make pass."""


STRICT = Allowance()
"""Nothing deferred, nothing owed: every failure the commit introduces is held against it."""


@dataclass(frozen=True)
class Verdict:
    passed: bool
    headline: str
    held: tuple[str, ...] = ()
    deferred: tuple[str, ...] = ()
    shared: tuple[str, ...] = field(default=())


def _names(tests: Collection[str]) -> str:
    shown = sorted(tests)
    return ", ".join(shown[:_SHOWN]) + (f" and {len(shown) - _SHOWN} more" if len(shown) > _SHOWN else "")


def by_test(
    now: Report, before: Report, *, changed: Collection[str], files: Collection[str], allow: Allowance, where: str
) -> Verdict | None:
    """The verdict from both reports; None when nothing is held yet but `now` stopped before the whole suite ran.

    `changed` are the files the commit changed where it lands, `files` every file of the commit, `where`
    names the landing point in the headline.
    """
    failing = now.failed
    owed = failing & allow.owed if ALL not in allow.owed else failing
    new = failing - before.failed - allow.owed
    own = {t for t in new if test_file(t, files) in (*changed, None)}
    broken = new - own
    deferred = broken if allow.defer else set()
    lines = []
    if owed:
        lines.append(f"held against it: tests it was to make pass still fail: {_names(owed)}")
    if own:
        lines.append(f"held against it: tests in test files it added or changed fail: {_names(own)}")
    if broken - deferred:
        lines.append(f"held against it: tests that passed at {where} fail once it lands: {_names(broken - deferred)}")
    held = owed | own | (broken - deferred)
    if not held and not now.complete:
        return None
    shared = failing & before.failed - allow.owed
    if deferred:
        lines.append(
            f"deferred: tests that passed at {where} fail once it lands, left for the tasks planned to build on it "
            f"to make pass: {_names(deferred)}"
        )
    if shared and not held:
        same = _names(shared)
        lines.append(f"not held against it: the verify command fails at {where} too, in the same tests: {same}")
    return Verdict(not held, "\n".join(lines), tuple(sorted(held)), tuple(sorted(deferred)), tuple(sorted(shared)))


def by_exit_status(*, before_ok: bool, allow: Allowance, where: str) -> Verdict:
    """The verdict on a failing command whose output names no tests (or not on both sides)."""
    if allow.owed:
        return Verdict(
            False,
            f"held against it: it was to make {_names(allow.owed)} pass, and the verify command still fails "
            "(its output names no tests to tell which)",
            (ALL,),
        )
    if before_ok and allow.defer:
        return Verdict(
            True,
            f"deferred: the verify command passed at {where} and fails once it lands; the tasks planned to build "
            "on it must make it pass",
            deferred=(ALL,),
        )
    if before_ok:
        return Verdict(False, f"held against it: the verify command passed at {where} and fails once it lands", (ALL,))
    return Verdict(True, f"not held against it: the verify command fails at {where} too", shared=(ALL,))
