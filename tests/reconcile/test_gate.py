"""The gate on real commits: parse, semantic and verify stages, each recorded; a real pytest in a worktree."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.events import GateChecked, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.reconcile.gate import Gate, GateResult
from plait.reconcile.verify import IntegrationWorktree, detect_verify_command

CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteEventStore:
    return SQLiteEventStore(tmp_path / "events.db")


def _gate(box: Sandbox, base: str, store: SQLiteEventStore, **kwargs: object) -> Gate:
    assert box.repo is not None
    return Gate(box.repo, base=base, log=RunLog(store, "r1"), **kwargs)  # type: ignore[arg-type]


def _stages(store: SQLiteEventStore) -> list[tuple[str, bool]]:
    events = store.events("r1", kinds=["gate"])
    return [(e.stage, e.passed) for e in events if isinstance(e, GateChecked)]


def test_a_clean_commit_passes_every_stage_and_each_is_recorded(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC, "test_calc.py": TEST})
    change = box.commit({"calc.py": CALC + "\n\ndef sub(a, b):\n    return a - b\n"}, parent=base)
    gate = _gate(box, base, store, verify_command=PYTEST)
    result = asyncio.run(gate.check(change, tasks=["t1"]))
    gate.close()
    assert result.passed and result.stage == "verify" and "1 passed" in result.output
    assert _stages(store) == [("parse", True), ("semantic", True), ("verify", True)]
    assert all(e.tasks == ["t1"] for e in store.events("r1", kinds=["gate"]) if isinstance(e, GateChecked))


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("calc.py", "def add(a, b)\n    return a + b\n", "calc.py:1: expected ':'"),
        ("calc.py", "def add(a, b):\n    return a + b\nreturn 1\n", "'return' outside function"),
        ("conf.json", '{"a": 1,}', "conf.json:1: invalid JSON"),
        ("conf.toml", "a = \n", "conf.toml: invalid TOML"),
        ("conf.yaml", "a: [1, 2\n", "conf.yaml:2: invalid YAML"),
        ("README.md", "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n", "README.md: conflict markers left"),
    ],
)
def test_the_parse_stage_rejects_broken_files(
    box: Sandbox, store: SQLiteEventStore, path: str, text: str, expected: str
) -> None:
    base = box.start({"calc.py": CALC})
    good = box.commit({"other.py": "X = 1\n"}, parent=base)
    bad = box.commit({path: text, "other.py": "X = 1\n"}, parent=base)
    branches = {"good": good, "bad": bad}
    result = asyncio.run(_gate(box, base, store).check(bad, branches=branches))
    assert not result.passed and result.stage == "parse" and expected in result.output
    assert result.culprit_hint == ("bad",)
    assert _stages(store) == [("parse", False)]


def test_the_parse_stage_accepts_tagged_yaml_templates_and_what_was_broken_at_the_base(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    base = box.start({"legacy.py": "print 'py2'\n"})
    change = box.commit(
        {
            "legacy.py": "print 'still py2'\n",
            "cfn.yaml": "Value: !Ref Bucket\nList: !Split [',', 'a,b']\n",
            "chart.yaml": "name: {{ .Values.name }}\n",
            "tsconfig.json": '{\n  // comment\n  "a": 1,\n}\n',
            "doc.md": "a heading\n=======\n",
        },
        parent=base,
    )
    result = asyncio.run(_gate(box, base, store, detect=False).check(change))
    assert result.passed, result.output
    assert result.output == "skipped: no verify command configured or detected"


def test_the_semantic_stage_catches_a_rename_against_a_new_call(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC, "main.py": "from calc import add\n"})
    rename = box.commit({"calc.py": CALC.replace("add", "plus"), "main.py": "from calc import plus\n"}, parent=base)
    caller = box.commit({"report.py": "import calc\n\nprint(calc.add(1, 2))\n"}, parent=base)
    combined = box.commit(
        {
            "calc.py": CALC.replace("add", "plus"),
            "main.py": "from calc import plus\n",
            "report.py": "import calc\n\nprint(calc.add(1, 2))\n",
        },
        parent=base,
    )
    gate = _gate(box, base, store, verify_command="exit 1")
    result = asyncio.run(gate.check(combined, branches={"rename": rename, "caller": caller}))
    assert result == GateResult(
        False, "semantic", "report.py:3: uses calc.add, which calc no longer defines", ("rename", "caller"), combined
    )
    assert _stages(store) == [("parse", True), ("semantic", False)]


def test_verify_runs_real_pytest_in_one_worktree_moved_between_commits(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC, "tests/test_calc.py": TEST})
    broken = box.commit({"calc.py": CALC.replace("a + b", "a - b")}, parent=base)
    fixed = box.commit({"calc.py": CALC.replace("a + b", "b + a")}, parent=broken)
    gate = _gate(box, base, store, python=sys.executable)
    assert gate.command_for(base) is not None and "-m pytest" in (gate.command_for(base) or "")
    before = box.state()
    failed = asyncio.run(gate.check(broken))
    assert not failed.passed and failed.stage == "verify" and "1 failed" in failed.output
    (gate.worktree.path / "stray.txt").write_text("left by a test\n")
    (gate.worktree.path / ".venv").mkdir()
    passed = asyncio.run(gate.check(fixed))
    assert passed.passed, passed.output
    assert not (gate.worktree.path / "stray.txt").exists() and (gate.worktree.path / ".venv").is_dir()
    assert box.state() == before
    gate.close()
    assert not gate.worktree.path.exists()


def test_a_tree_checked_before_is_answered_from_memory(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC})
    one = box.commit({"x.py": "X = 1\n"}, parent=base, message="one")
    same_tree = box.commit({"x.py": "X = 1\n"}, parent=base, message="another commit, same tree")
    gate = _gate(box, base, store, detect=False)
    first = asyncio.run(gate.check(one))
    second = asyncio.run(gate.check(same_tree))
    assert first.passed and second.passed and second.commit == same_tree
    assert gate.runs == 1 and len(_stages(store)) == 3


def test_a_verify_command_that_times_out_fails(box: Sandbox, store: SQLiteEventStore) -> None:
    base = box.start({"calc.py": CALC})
    result = asyncio.run(_gate(box, base, store, verify_command="sleep 5", timeout=0.2).check(base))
    assert not result.passed and "[timed out]" in result.output


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"tests/test_a.py": ""}, "-m pytest -q -x"),
        ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, "-m pytest -q -x"),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, None),
        ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, "npm test"),
        ({"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}})}, None),
        ({"Cargo.toml": ""}, "cargo test"),
        ({"go.mod": ""}, "go test ./..."),
        ({"Makefile": "build:\n\tcc x.c\n\ntest: build\n\t./run\n"}, "make test"),
        ({"Makefile": "build:\n\tcc x.c\n"}, None),
        ({"tests/fixture.json": "{}"}, None),
    ],
)
def test_detection(files: dict[str, str], expected: str | None) -> None:
    command = detect_verify_command(set(files), files.get, python="python3")
    assert (command is None) if expected is None else (command is not None and command.endswith(expected))


def test_detected_pytest_puts_the_tree_before_installed_copies() -> None:
    command = detect_verify_command({"src/pkg/__init__.py", "tests/test_a.py"}, lambda _: None, python="/v/python")
    assert command == 'PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}" /v/python -m pytest -q -x'


def test_a_verify_command_that_fails_at_the_base_too_is_not_held_against_a_commit(
    box: Sandbox, store: SQLiteEventStore
) -> None:
    base = box.start({"calc.py": CALC.replace("a + b", "a - b"), "test_calc.py": TEST})
    change = box.commit({"other.py": "X = 1\n"}, parent=base)
    result = asyncio.run(_gate(box, base, store, verify_command=PYTEST).check(change))
    assert result.passed and result.output.startswith("not held against it: the verify command fails at the base")
    events = [e for e in store.events("r1", kinds=["gate"]) if isinstance(e, GateChecked) and e.stage == "verify"]
    assert [(e.commit, e.passed) for e in events] == [(base, False), (change, True)]


def test_a_worktree_reused_after_a_kill_is_not_stuck_on_its_index_lock(box: Sandbox, tmp_path: Path) -> None:
    first = box.start({"a.txt": "1\n"})
    second = box.branch("next", {"a.txt": "2\n"}, parent=first)
    assert box.repo is not None
    path = tmp_path / "integration"
    IntegrationWorktree(box.repo, path).checkout(first)
    gitdir = Path((path / ".git").read_text().split(":", 1)[1].strip())
    (gitdir / "index.lock").write_text("")  # a process killed in the middle of a checkout
    again = IntegrationWorktree(box.repo, path)  # the resumed process
    assert (again.checkout(second) / "a.txt").read_text() == "2\n"
