"""The merge queue on real branches: merging, the ladder's rungs, the gate, bisection, ejection."""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.events import GateChecked, Integrated, MergeStep, NotePosted, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import ScriptedModel
from plait.reconcile._bisect import find_culprit
from plait.reconcile.gate import Gate, GateResult
from plait.reconcile.ladder import default_resolvers
from plait.reconcile.llm_resolver import LLMResolver
from plait.reconcile.queue import MergeQueue, QueueReport, TaskBranch
from plait.reconcile.types import Resolver
from plait.workspace import CommandResult

CALC = """def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def total(items):
    result = 0
    for item in items:
        result = add(result, item)
    return result
"""
TESTS = """from calc import add, mul, sub, total


def test_add():
    assert add(2, 3) == 5


def test_sub_mul():
    assert sub(5, 3) == 2 and mul(2, 3) == 6


def test_total():
    assert total([1, 2, 3]) == 6
"""
PYTEST = f"{sys.executable} -m pytest -q -x -p no:cacheprovider"
RUN = "r1"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteEventStore:
    return SQLiteEventStore(tmp_path / "events.db")


def _queue(
    box: Sandbox, base: str, store: SQLiteEventStore, *, verify: str | None = None, resolvers: Sequence[Resolver] = ()
) -> MergeQueue:
    assert box.repo is not None
    gate = Gate(box.repo, base=base, log=RunLog(store, RUN), verify_command=verify, detect=False)
    return MergeQueue(box.repo, RunLog(store, RUN), base, gate=gate, resolvers=list(resolvers) or default_resolvers())


def _task(box: Sandbox, task_id: str, files: dict[str, str | None], parent: str, **kw: object) -> TaskBranch:
    branch = f"plait/{RUN}/{task_id}"
    sha = box.branch(branch, files, parent=parent)
    return TaskBranch(task_id, branch, sha, instructions=f"do {task_id}", summary=f"did {task_id}", **kw)  # type: ignore[arg-type]


def _integrate(queue: MergeQueue, *tasks: TaskBranch) -> QueueReport:
    async def go() -> QueueReport:
        for task in tasks:
            await queue.submit(task)
        return await queue.drain()

    return asyncio.run(go())


def _steps(store: SQLiteEventStore) -> list[tuple[str, str, str]]:
    return [(e.task, e.rung, e.outcome) for e in store.events(RUN, kinds=["merge"]) if isinstance(e, MergeStep)]


def _gate_events(store: SQLiteEventStore) -> list[GateChecked]:
    return [e for e in store.events(RUN, kinds=["gate"]) if isinstance(e, GateChecked)]


def _assert_only_gated_commits(box: Sandbox, store: SQLiteEventStore, base: str, queue: MergeQueue) -> None:
    """Every commit the integration branch ever pointed at is the base or passed every gate stage."""
    history = box.git("reflog", "show", "--format=%H", queue.branch).split()
    passed = {e.commit for e in _gate_events(store) if e.stage == "verify" and e.passed}
    assert history and set(history) <= passed | {base}
    assert box.git("rev-parse", queue.branch) == queue.head


def test_branches_editing_different_functions_of_one_file_both_integrate(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    before = box.state()
    a = _task(box, "a", {"calc.py": CALC.replace("return a + b", "return b + a")}, base)
    b = _task(box, "b", {"calc.py": CALC.replace("return a * b", "return b * a")}, base)
    queue = _queue(box, base, store, verify=PYTEST)
    report = _integrate(queue, a, b)
    queue.gate.close()
    assert report.integrated == ["a", "b"] and report.ejected == []
    combined = box.show(report.head, "calc.py")
    assert "return b + a" in combined and "return b * a" in combined
    assert _steps(store) == [("a", "git", "clean"), ("b", "git", "clean")]
    _assert_only_gated_commits(box, store, base, queue)
    assert box.state() == before


def test_new_functions_added_at_the_same_place_are_resolved_by_a_rung_and_logged(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    a = _task(box, "a", {"calc.py": CALC + "\n\ndef half(x):\n    return x / 2\n"}, base)
    b = _task(box, "b", {"calc.py": CALC + "\n\ndef double(x):\n    return x * 2\n"}, base)
    report = _integrate(_queue(box, base, store), a, b)
    assert report.integrated == ["a", "b"], report.ejected
    combined = box.show(report.head, "calc.py")
    assert "def half" in combined and "def double" in combined
    steps = _steps(store)
    assert steps[:2] == [("a", "git", "clean"), ("b", "git", "conflict")]
    assert steps[2][0] == "b" and steps[2][1] in ("deterministic", "structured") and steps[2][2] == "resolved"
    assert [r.rung for r in report.resolutions["b"]] == [steps[2][1]]


def _conflicting(box: Sandbox) -> tuple[str, TaskBranch, TaskBranch]:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    a = _task(box, "a", {"calc.py": CALC.replace("return a + b", "return int(a) + int(b)")}, base)
    b = _task(box, "b", {"calc.py": CALC.replace("return a + b", "return float(a) + float(b)")}, base)
    return base, a, b


def test_a_textual_conflict_is_resolved_by_the_llm_rung(box: Sandbox, store: SQLiteEventStore) -> None:
    base, a, b = _conflicting(box)
    resolved = CALC.replace("return a + b", "return float(a) + float(b)")
    model = ScriptedModel([{"tool_calls": [{"name": "resolve", "arguments": {"content": resolved}}]}])
    resolvers = [*default_resolvers(), LLMResolver(model, RunLog(store, RUN))]
    report = _integrate(_queue(box, base, store, resolvers=resolvers), a, b)
    assert report.integrated == ["a", "b"] and box.show(report.head, "calc.py") == resolved.rstrip("\n")
    assert ("b", "llm", "resolved") in _steps(store)
    prompt = model.calls[0].messages[0]
    assert "do a" in getattr(prompt, "text", "") and "did b" in getattr(prompt, "text", "")


def test_an_unresolvable_conflict_ejects_the_branch_with_its_conflicts(box: Sandbox, store: SQLiteEventStore) -> None:
    base, a, b = _conflicting(box)
    queue = _queue(box, base, store, verify="true")
    report = _integrate(queue, a, b)
    assert report.integrated == ["a"]
    (ejection,) = report.ejected
    assert ejection.task_id == "b" and ejection.conflicts == ("calc.py",) and ejection.stage == "merge"
    assert "<<<<<<<" in ejection.output and "calc.py" in ejection.reason
    assert _steps(store)[-1] == ("b", "redo", "conflict")
    ejected = [e for e in store.events(RUN, kinds=["integrated"]) if isinstance(e, Integrated) and e.ejected]
    assert [e.ejected for e in ejected] == [["b"]]
    redo = _task(box, "b", {"calc.py": CALC.replace("return a + b", "return float(int(a) + int(b))")}, queue.head)
    again = _integrate(queue, redo)
    assert again.integrated == ["b"] and "float(int(a)" in box.show(again.head, "calc.py")
    _assert_only_gated_commits(box, store, base, queue)


RENAMED = CALC.replace("def total(", "def sum_all(")
TESTS_RENAMED = TESTS.replace("total", "sum_all")
REPORT = "from calc import total\n\n\ndef report(items):\n    return f'total: {total(items)}'\n"


def test_a_clean_merge_that_breaks_is_caught_and_its_culprit_ejected(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    rename = _task(box, "rename", {"calc.py": RENAMED, "tests/test_calc.py": TESTS_RENAMED}, base)
    caller = _task(box, "caller", {"report.py": REPORT}, base)
    queue = _queue(box, base, store, verify=PYTEST)
    report = _integrate(queue, rename, caller)
    assert report.integrated == ["rename"]
    (ejection,) = report.ejected
    assert ejection.task_id == "caller" and ejection.stage == "semantic"
    assert "report.py:1: imports 'total' from calc, which calc no longer defines" in ejection.output
    assert report.gate_runs == 2  # the batch, then the prefix before the hinted culprit
    assert box.show(queue.head, "calc.py") == RENAMED.rstrip("\n")
    assert "report.py" not in box.git("ls-tree", "--name-only", queue.head)
    _assert_only_gated_commits(box, store, base, queue)
    fixed = _task(box, "caller", {"report.py": REPORT.replace("total", "sum_all")}, queue.head)
    assert _integrate(queue, fixed).integrated == ["caller"]


def _five(box: Sandbox, base: str, culprit: int, culprit_files: dict[str, str | None]) -> list[TaskBranch]:
    tasks = []
    for i in range(5):
        files: dict[str, str | None] = {f"m{i}.py": f"def f{i}():\n    return {i}\n"}
        files[f"tests/test_m{i}.py"] = f"from m{i} import f{i}\n\n\ndef test_f{i}():\n    assert f{i}() == {i}\n"
        if i == culprit:
            files.update(culprit_files)
        tasks.append(_task(box, f"t{i}", files, base))
    return tasks


def test_bisection_finds_a_verify_culprit_among_five_in_about_log2_gate_runs(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    tasks = _five(box, base, 2, {"calc.py": CALC.replace("return a + b", "return a + b + 1")})
    queue = _queue(box, base, store, verify=PYTEST)
    report = _integrate(queue, *tasks)
    queue.gate.close()
    assert report.integrated == ["t0", "t1", "t3", "t4"]
    (ejection,) = report.ejected
    assert ejection.task_id == "t2" and ejection.stage == "verify" and "test_add" in ejection.output
    checked = [e.commit for e in _gate_events(store) if e.stage == "parse"]
    assert len(checked) == report.gate_runs == 4  # the batch, 2 bisection steps (at most ceil log2 5), the rest
    assert box.show(queue.head, "calc.py") == CALC.rstrip("\n")
    _assert_only_gated_commits(box, store, base, queue)


def test_a_semantic_hint_finds_the_culprit_among_five_with_fewer_runs(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    tasks = _five(box, base, 3, {"report.py": REPORT})
    tasks[0] = _task(box, "t0", {"calc.py": RENAMED, "tests/test_calc.py": TESTS_RENAMED}, base)
    queue = _queue(box, base, store, verify="true")
    report = _integrate(queue, *tasks)
    assert report.integrated == ["t0", "t1", "t2", "t4"] and [e.task_id for e in report.ejected] == ["t3"]
    assert report.gate_runs == 4  # the batch, the culprit's prefix, the one before it, the rebuilt rest
    _assert_only_gated_commits(box, store, base, queue)


def test_an_ejected_branchs_dependents_are_checked_again_without_it(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    helper_added = RENAMED + "\n\ndef helper():\n    return 1\n"  # and tests still import `total`: broken
    helper = _task(box, "helper", {"calc.py": helper_added}, base)
    user = _task(box, "user", {"app.py": "from calc import helper\n\nhelper()\n"}, base, depends_on=("helper",))
    other = _task(box, "other", {"notes.txt": "independent\n"}, base)
    queue = _queue(box, base, store)
    report = _integrate(queue, user, other, helper)
    assert [m[0] for m in _steps(store)][:3] == ["other", "helper", "user"]
    assert [e.task_id for e in report.ejected] == ["helper", "user"] and report.integrated == ["other"]
    assert "tests/test_calc.py:1: imports 'total' from calc" in report.ejected[0].output
    assert report.ejected[1].output == "app.py:1: imports 'helper' from calc, which does not define it"


def test_concurrent_submitters_integrate_each_branch_once(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC})
    tasks = [_task(box, f"t{i}", {f"f{i}.py": f"X = {i}\n"}, base) for i in range(4)]
    queue = _queue(box, base, store)

    async def finish(task: TaskBranch) -> QueueReport:
        await queue.submit(task)
        return await queue.drain()

    async def all_of() -> list[QueueReport]:
        return list(await asyncio.gather(*(finish(t) for t in tasks)))

    reports = asyncio.run(all_of())
    integrated = [t for r in reports for t in r.integrated]
    assert sorted(integrated) == ["t0", "t1", "t2", "t3"]
    assert sorted(box.git("ls-tree", "--name-only", queue.head).split()) == [
        "calc.py",
        "f0.py",
        "f1.py",
        "f2.py",
        "f3.py",
    ]


def test_a_new_queue_takes_up_the_integration_branch_where_it_stands(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC})
    first = _queue(box, base, store)
    a = _task(box, "a", {"a.py": "A = 1\n"}, base)
    _integrate(first, a)
    second = _queue(box, base, store)
    assert second.head == first.head and "a" in second.integrated
    same = _integrate(second, a)
    assert same.integrated == ["a"] and same.head == first.head and same.gate_runs <= 1


def test_a_branch_git_cannot_read_is_ejected(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC})
    ghost = TaskBranch("ghost", "plait/r1/ghost", "0" * 40)
    report = _integrate(_queue(box, base, store), ghost)
    assert [e.task_id for e in report.ejected] == ["ghost"] and "git could not merge it" in report.ejected[0].reason


class _BrokenRunner:
    """A runner whose machinery fails (as a sandbox that cannot start would)."""

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        raise OSError("cannot start the sandbox")


def test_a_gate_that_breaks_down_leaves_the_batch_pending(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC})
    assert box.repo is not None
    task = _task(box, "a", {"a.py": "A = 1\n"}, base)
    broken = Gate(box.repo, base=base, log=RunLog(store, RUN), verify_command="true", runner=_BrokenRunner())
    queue = MergeQueue(box.repo, RunLog(store, RUN), base, gate=broken, resolvers=default_resolvers())
    with pytest.raises(OSError, match="sandbox"):
        _integrate(queue, task)
    assert queue.head == base
    queue.gate = Gate(box.repo, base=base, log=RunLog(store, RUN), verify_command="true")
    assert asyncio.run(queue.drain()).integrated == ["a"]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_bisection_probes_at_most_log2_prefixes_and_a_right_hint_two(size: int) -> None:
    tasks = [f"t{i}" for i in range(size)]
    for culprit in range(size):
        for hint in ((), (tasks[culprit],), (tasks[0], tasks[-1])):
            probes: list[int] = []

            async def probe(position: int, culprit: int = culprit, probes: list[int] = probes) -> GateResult:
                probes.append(position)
                return GateResult(position < culprit, "verify", "")

            last = GateResult(False, "verify", "", hint)
            found, _ = asyncio.run(find_culprit(tasks, last, probe))
            assert found == culprit
            bound = 2 if hint == (tasks[culprit],) else math.ceil(math.log2(size)) + (2 if hint else 0)
            assert len(probes) <= bound, (size, culprit, hint, probes)


def test_integration_is_announced_on_the_board_to_whoever_touches_its_files(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TESTS})
    a = _task(box, "a", {"calc.py": CALC.replace("return a + b", "return b + a")}, base)
    report = _integrate(_queue(box, base, store), a)
    notes = [e for e in store.events(RUN, kinds=["note"]) if isinstance(e, NotePosted)]
    assert [(n.agent, n.topic, n.paths) for n in notes] == [("merge-queue", "integrated", ["calc.py"])]
    assert f"Task a is integrated (commit {report.head[:10]})" in notes[0].text and "did a" in notes[0].text


def test_a_rejection_names_the_failed_test_not_the_command() -> None:
    from plait.reconcile.gate import GateResult
    from plait.reconcile.queue import _gate_ejection

    output = "$ python -m pytest -q\n[exit 1]\n.F.\nFAILED tests/test_a.py::test_b - assert 1 == 2\n1 failed\n"
    ejection = _gate_ejection("t1", GateResult(passed=False, stage="verify", output=output))
    assert "FAILED tests/test_a.py::test_b" in ejection.reason and "$ python" not in ejection.reason
    said = "tests it was to make pass still fail: tests/test_a.py::test_b\n" + output
    assert "tests it was to make pass still fail" in _gate_ejection("t1", GateResult(False, "verify", said)).reason


def test_long_text_is_cut_at_a_word() -> None:
    from plait.reconcile.verdict import shorten

    text = "Whole toolz/tests suite passes, and the new function keeps laziness on an infinite iterator"
    cut = shorten(text, 60)
    assert len(cut) <= 60 and cut.endswith("…") and text.startswith(cut[:-1])
    assert cut[:-1].split()[-1] in text.split()  # the last word is whole
    assert shorten("short", 60) == "short"
