"""The `--no-tui` progress lines say what the merge queue and the gate decided: a merge and its rung, the gate's
verdict with the first line of why, a rejection and what follows, the verify command's check at the base."""

from __future__ import annotations

import io
import sys

from rich.console import Console

from plait.events.types import (
    Decision,
    Event,
    GateChecked,
    Integrated,
    MergeStep,
    RunStarted,
    TaskFinished,
    TaskStarted,
    VerifyChecked,
)
from plait.ui.progress import ProgressPrinter

SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
VERIFY = f"{sys.executable} -m pytest -q -p no:cacheprovider"
FAILED = f"$ {VERIFY}\n[exit 1]\n.F\nFAILED test_x.py::test_y - assert 1 == 2\n1 failed, 1 passed in 0.02s\n"


def _lines(*events: Event, max_attempts: int | None = None) -> list[str]:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    printer = ProgressPrinter(console, max_attempts)
    for event in events:
        printer(event)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def _started(task: str, attempt: int) -> TaskStarted:
    branch = f"plait/r1/{task}" + (f".{attempt}" if attempt > 1 else "")
    return TaskStarted(
        run_id="r1", agent=task, title=task, branch=branch, worktree="/w", base_commit=SHA, attempt=attempt
    )


def test_merges_verdicts_rejections_and_what_follows_are_one_line_each() -> None:
    rejected = "the verify check failed once it was merged: FAILED test_x.py::test_y - assert 1 == 2"
    lines = _lines(
        RunStarted(
            run_id="r1", task="t", repo="/r", base_commit=SHA, base_ref="main", model="m", settings={"max_attempts": 2}
        ),
        _started("alpha", 1),
        _started("beta", 1),
        MergeStep(run_id="r1", task="alpha", branch="plait/r1/alpha", rung="git", outcome="clean", commit=SHA),
        GateChecked(run_id="r1", commit=SHA, stage="parse", passed=True, tasks=["alpha"]),
        GateChecked(
            run_id="r1", commit=SHA, stage="verify", passed=True, tasks=["alpha"], output="$ x\n[exit 0]\n2 passed"
        ),
        Integrated(run_id="r1", branch="plait/r1/integration", commit=SHA, tasks=["alpha"], reason="passed the gate"),
        MergeStep(run_id="r1", task="beta", branch="plait/r1/beta", rung="git", outcome="conflict", files=["x.py"]),
        MergeStep(run_id="r1", task="beta", branch="b", rung="structured", outcome="resolved", files=["x.py"]),
        GateChecked(run_id="r1", commit=SHA, stage="verify", passed=False, tasks=["alpha", "beta"], output=FAILED),
        MergeStep(run_id="r1", task="beta", branch="b", rung="redo", outcome="failed", detail=rejected),
        Integrated(run_id="r1", branch="plait/r1/integration", commit=SHA, ejected=["beta"], reason=rejected),
        _started("beta", 2),
        Integrated(run_id="r1", branch="plait/r1/integration", commit=SHA, ejected=["beta"], reason=rejected),
        TaskFinished(run_id="r1", agent="beta", status="dropped", reason="failed 2 attempt(s)"),
    )
    assert lines == [
        "alpha started on branch plait/r1/alpha",
        "beta started on branch plait/r1/beta",
        "alpha merged by git, no conflict",
        "gate passed alpha @ a1b2c3d4e5: 2 passed",
        "alpha integrated: plait/r1/integration @ a1b2c3d4e5",
        "beta conflicts in x.py: the merge ladder takes them",
        "beta merged: x.py resolved by the structured rung",
        "gate failed alpha, beta @ a1b2c3d4e5: the verify check: FAILED test_x.py::test_y - assert 1 == 2",
        f"beta rejected: {rejected}; retry 2 of 2 follows, told why",
        "beta started attempt 2 of 2 on branch plait/r1/beta.2",
        f"beta rejected: {rejected}; no attempt left (2 of 2): it is dropped",
        "beta dropped: failed 2 attempt(s)",
    ]


AT_BASE = {"run_id": "r1", "commit": SHA, "command": "make test"}


def test_the_check_at_the_base_is_one_line_and_model_text_is_shown_not_obeyed() -> None:
    hostile = "FAILED t.py::t - \x1b[2J[link=https://evil.example]x[/link]"
    lines = _lines(
        VerifyChecked(**AT_BASE, decision="verify command `make test` passes at the base", state="passes"),
        VerifyChecked(**AT_BASE, decision="cannot run", state="cannot-run"),
        GateChecked(run_id="r1", commit=SHA, stage="verify", passed=False, output="base, for comparison"),
        GateChecked(
            run_id="r1", commit=SHA, stage="verify", passed=False, tasks=["main"], output=f"$ x\n[exit 1]\n{hostile}"
        ),
        max_attempts=1,
    )
    assert lines == [
        "run verify command `make test` passes at the base",
        "gate failed main @ a1b2c3d4e5: the verify check: FAILED t.py::t - ␛[2J[link=https://evil.example]x[/link]",
    ]


def test_a_plan_run_as_one_agent_says_why_with_the_estimate() -> None:
    reason = "one agent: in parallel this plan would cost ~1.3× the tokens of one agent, ~2.0× faster; ..."
    lines = _lines(Decision(run_id="r1", topic="mode", decision="one agent, no parallel overhead", reason=reason))
    assert lines == [f"run one agent, no parallel overhead: {reason}"]


def test_the_gate_line_names_the_failure_held_against_the_work_not_a_deferred_one() -> None:
    from plait.reconcile.verdict import gate_why

    output = (
        "held against it: tests in test files it added or changed fail: t/test_new.py::test_b\n"
        "$ pytest -q\n[exit 1]\n"
        "FAILED t/test_registry.py::test_all_registered - AssertionError: deferred to the registry task\n"
        "FAILED t/test_new.py::test_b - assert 1 == 2\n"
    )
    why = gate_why("verify", output)
    assert "t/test_new.py::test_b - assert 1 == 2" in why and "test_all_registered" not in why
