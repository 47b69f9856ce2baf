"""A real event store, a plan of three tasks sharing a contract, and a real git repository."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from plait.events import SQLiteEventStore, TaskStarted
from plait.plan_model import Contract, Plan, PlanTask

RUN = "r1"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteEventStore]:
    db = SQLiteEventStore(tmp_path / "events.db")
    yield db
    db.close()


@pytest.fixture
def plan() -> Plan:
    return Plan(
        mode="parallel",
        reason="three areas",
        tasks=[
            PlanTask(
                id="api",
                title="Add the ledger API",
                instructions="x",
                writes=["src/api/**"],
                reads=["src/models.py"],
                provides=["ledger-api"],
            ),
            PlanTask(
                id="ui",
                title="Show the ledger",
                instructions="x",
                writes=["src/ui/**"],
                reads=["docs/"],
                consumes=["ledger-api"],
            ),
            PlanTask(id="docs", title="Document it", instructions="x", writes=["docs/**"]),
        ],
        contracts=[Contract(name="ledger-api", signature="def post(entry) -> int", owner="api", path="src/ledger.py")],
    )


@pytest.fixture
def start(store: SQLiteEventStore) -> Callable[..., None]:
    """Logs the start of tasks, as the parallel runner does."""

    def log(*tasks: str) -> None:
        for task in tasks:
            store.append(
                TaskStarted(run_id=RUN, agent=task, title=task, branch=f"b/{task}", worktree="w", base_commit="c")
            )

    return log


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "Test")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "test@example.invalid")
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# ledger\n")
    (root / "src" / "models.py").write_text("class Entry: ...\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root
