"""On parallel workers (`-n 2 --dist loadgroup`) the tests of one group run on one worker: those marked with an
xdist_group, and those of a module that share a module-scoped fixture, made once rather than once per worker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODULE = """
import os
from pathlib import Path

import pytest

SEEN = Path(os.environ["SEEN"])


def _note(kind: str) -> None:
    (SEEN / f"{kind}-{os.environ['PYTEST_XDIST_WORKER']}").touch()


@pytest.fixture(scope="module")
def made() -> str:
    return "made"


@pytest.mark.parametrize("n", range(8))
def test_shares_the_fixture(made: str, n: int) -> None:
    _note("shared")


@pytest.mark.parametrize("n", range(8))
def test_loose(n: int) -> None:
    _note("loose")
"""

GROUPED = """
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.mark.parametrize("n", range(8))
def test_grouped(n: int) -> None:
    (Path(os.environ["SEEN"]) / f"grouped-{os.environ['PYTEST_XDIST_WORKER']}").touch()
"""


def test_a_groups_tests_run_on_one_worker(tmp_path: Path) -> None:
    suite, seen = tmp_path / "suite", tmp_path / "seen"
    suite.mkdir()
    seen.mkdir()
    (suite / "test_shared.py").write_text(MODULE)
    (suite / "test_grouped.py").write_text(GROUPED)
    here = Path(__file__).parent
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "conftest"]
        + ["-p", "no:cacheprovider", str(suite)],
        cwd=suite,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(here), "SEEN": str(seen)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers = {kind: sorted(p.name.split("-")[1] for p in seen.glob(f"{kind}-*")) for kind in ("shared", "grouped")}
    assert [len(w) for w in workers.values()] == [1, 1], workers
