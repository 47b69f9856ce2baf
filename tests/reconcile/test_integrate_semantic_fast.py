"""The semantic check's cheap first looks (top-level names, imports the base had) miss nothing the full scan finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.semantic import find_breakage


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _check(box: Sandbox, base_files: dict[str, str], combined: dict[str, str | None]) -> list[str]:
    base = box.start(base_files)
    assert box.repo is not None
    sha = box.commit(combined, parent=base)
    return [str(b) for b in find_breakage(box.repo, base, sha)]


@pytest.mark.parametrize(
    "declared",
    [
        "def setup():\n    global name\n    name = 1\n",
        "def setup(): global name; name = 1\n",
        "x = 1; global name\n",
    ],
)
def test_a_name_only_a_global_statement_bound_is_reported_once_the_statement_goes(box: Sandbox, declared: str) -> None:
    found = _check(
        box,
        {"lib.py": declared, "user.py": "import lib\n\nprint(lib.name)\n"},
        {"lib.py": "def setup():\n    pass\n"},
    )
    assert found == ["user.py:3: uses lib.name, which lib no longer defines"]


def test_an_import_guarded_at_the_base_and_unguarded_now_is_checked(box: Sandbox) -> None:
    guarded = "try:\n    from lib import name\nexcept ImportError:\n    name = None\n"
    found = _check(
        box,
        {"lib.py": "other = 1\n", "user.py": guarded},
        {"user.py": "from lib import name\n"},
    )
    assert found == ["user.py:1: imports 'name' from lib, which does not define it"]


def test_an_import_unchanged_since_the_base_is_not_reported_again(box: Sandbox) -> None:
    found = _check(
        box,
        {"lib.py": "other = 1\n", "user.py": "from lib import name\n"},
        {"user.py": "from lib import name\n\nprint(name)\n"},
    )
    assert found == []


def test_a_module_that_kept_its_names_but_gained_a_use_of_a_gone_one_is_still_judged(box: Sandbox) -> None:
    found = _check(
        box,
        {"lib.py": "def total():\n    return 1\n", "user.py": "X = 1\n"},
        {"lib.py": "def grand_total():\n    return 1\n", "user.py": "from lib import total\n"},
    )
    assert found == ["user.py:1: imports 'total' from lib, which lib no longer defines"]
