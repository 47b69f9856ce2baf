"""The verify stage judges what a commit introduces where it lands, test by test; a plan may defer or owe tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.reconcile._testrun import read_report
from plait.reconcile.gate import Allowance, Gate

PYTEST = f"{sys.executable} -m pytest -q -x -p no:cacheprovider"
CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = """from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteEventStore:
    return SQLiteEventStore(tmp_path / "events.db")


def _gate(box: Sandbox, base: str, store: SQLiteEventStore) -> Gate:
    assert box.repo is not None
    return Gate(box.repo, base=base, log=RunLog(store, "r1"), verify_command=PYTEST)


def test_pytest_and_unittest_reports_are_read_test_by_test() -> None:
    pytest_out = """tests/test_a.py:3: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_bad - assert 0
FAILED tests/test_a.py::test_p[c - d] - AssertionError: assert 'c - d' == 'a b'
ERROR tests/test_b.py
===================== 2 failed, 2 passed, 1 error in 0.08s ====================="""
    report = read_report(pytest_out)
    assert report is not None and report.complete
    assert report.failed == {"tests/test_a.py::test_bad", "tests/test_a.py::test_p[c - d]", "tests/test_b.py"}
    stopped = "FAILED t.py::test_x - assert 0\n!!!!!!!! stopping after 1 failures !!!!!!!!\n1 failed, 1 passed in 0.05s"
    cut_short = read_report(stopped)
    assert cut_short is not None and cut_short.failed == {"t.py::test_x"} and not cut_short.complete
    cut = "FAILED t.py::test_x - assert 0\n... 3 lines cut ...\n2 failed, 1 passed in 0.05s"
    assert read_report(cut) is None  # a summary that names fewer failures than it counts is not trusted
    unittest_out = (
        "ERROR: test_err (test_u.T.test_err)\nFAIL: test_bad (test_u.T.test_bad)\n"
        "Ran 3 tests in 0.006s\n\nFAILED (failures=1, errors=1)"
    )
    by_unittest = read_report(unittest_out)
    assert by_unittest is not None and by_unittest.failed == {"test_u.T.test_err", "test_u.T.test_bad"}
    assert read_report("make: *** [test] Error 1") is None


def test_failures_the_landing_point_shares_are_not_held_but_a_new_one_is_even_behind_x(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    """The landing point fails test_add; with `-x` the suite stops there, so the gate runs on to find the rest."""
    base = box.start({"calc.py": CALC.replace("a + b", "a - b"), "tests/test_calc.py": TESTS})
    harmless = box.commit({"other.py": "X = 1\n"}, parent=base)
    breaking = box.commit({"calc.py": CALC.replace("a + b", "a - b").replace("a * b", "a ** b")}, parent=base)
    gate = _gate(box, base, store)
    try:
        kept = asyncio.run(gate.check(harmless, against=base))
        broke = asyncio.run(gate.check(breaking, against=base))
    finally:
        gate.close()
    assert kept.passed and kept.output.startswith("not held against it: the verify command fails at the base")
    assert not broke.passed and broke.failing == ("tests/test_calc.py::test_mul",)
    assert "tests that passed at the base commit fail once it lands: tests/test_calc.py::test_mul" in broke.output


def test_a_branch_the_plan_builds_on_may_leave_a_test_for_its_dependents_but_not_its_own(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    # it breaks test_mul, in a test file it does not change, which its dependents are planned to fix
    breaks = box.commit({"calc.py": CALC.replace("a * b", "a ** b")}, parent=base)
    own = "from calc import add\n\n\ndef test_own():\n    assert add(1, 1) == 3\n"
    with_own = box.commit({"calc.py": CALC.replace("a * b", "a ** b"), "tests/test_own.py": own}, parent=base)
    gate = _gate(box, base, store)
    try:
        strict = asyncio.run(gate.check(breaks, against=base))
        deferred = asyncio.run(gate.check(breaks, against=base, allow=Allowance(defer=True)))
        owned = asyncio.run(gate.check(with_own, against=base, allow=Allowance(defer=True)))
        # the dependent that lands last owes the test: still failing, it is held against it
        owing = asyncio.run(gate.check(breaks, against=breaks, allow=Allowance(owed=frozenset(deferred.deferred))))
        paid = asyncio.run(gate.check(base, against=breaks, allow=Allowance(owed=frozenset(deferred.deferred))))
    finally:
        gate.close()
    assert not strict.passed and strict.failing == ("tests/test_calc.py::test_mul",)
    assert deferred.passed and deferred.deferred == ("tests/test_calc.py::test_mul",)
    assert not owned.passed and owned.failing == ("tests/test_own.py::test_own",)
    assert not owing.passed and owing.failing == ("tests/test_calc.py::test_mul",)
    assert "tests it was to make pass still fail" in owing.output
    assert paid.passed


def test_a_command_that_names_no_tests_is_judged_by_its_exit_status_where_it_lands(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    base = box.start({"ok": "1\n"})
    breaks = box.commit({"ok": "0\n"}, parent=base)
    assert box.repo is not None
    gate = Gate(box.repo, base=base, log=RunLog(store, "r1"), verify_command="grep -q 1 ok")
    try:
        held = asyncio.run(gate.check(breaks, against=base))
        left = asyncio.run(gate.check(breaks, against=base, allow=Allowance(defer=True)))
        shared = asyncio.run(gate.check(breaks, against=breaks))
    finally:
        gate.close()
    assert not held.passed and held.failing == ("*",) and "passed at the base commit and fails" in held.output
    assert left.passed and left.deferred == ("*",)
    assert shared.passed
