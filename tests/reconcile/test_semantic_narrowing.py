"""The semantic check reads only the files that may use what a merge removed: a file that mentions a removed name
but cannot refer to its module is not parsed, and every way a file can refer to the module is still found."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile._sources import Sources
from plait.reconcile.semantic import find_breakage

LIB = "def chain():\n    return 1\n\n\ndef other():\n    return 2\n"
LIB_AFTER = "def other():\n    return 2\n"
UNRELATED = {f"tests/test_{i}.py": "from itertools import chain\n\nprint(chain([], []))\n" for i in range(5)}


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _check(box: Sandbox, base_files: dict[str, str], combined: dict[str, str | None]) -> tuple[list[str], int]:
    base = box.start(base_files)
    assert box.repo is not None
    sha = box.commit(combined, parent=base)
    sources = Sources(box.repo)
    return [str(b) for b in find_breakage(box.repo, base, sha, sources=sources)], sources.parses


def test_files_that_only_mention_a_removed_name_are_not_parsed(box: Sandbox) -> None:
    found, parses = _check(
        box, {"lib.py": LIB, "user.py": "import lib\n\nlib.chain()\n", **UNRELATED}, {"lib.py": LIB_AFTER}
    )
    assert found == ["user.py:3: uses lib.chain, which lib no longer defines"]
    assert parses == 3  # lib.py before and after, user.py; not the five tests that import another chain


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("pkg/mod.py", "from . import chain\n", "pkg/mod.py:1: imports 'chain' from pkg, which pkg no longer defines"),
        (
            "pkg/sub/mod.py",
            "from .. import chain\n",
            "pkg/sub/mod.py:1: imports 'chain' from pkg, which pkg no longer defines",
        ),
        ("app.py", "from pkg import chain\n", "app.py:1: imports 'chain' from pkg, which pkg no longer defines"),
        ("app.py", "import pkg as p\n\np.chain()\n", "app.py:3: uses pkg.chain, which pkg no longer defines"),
        ("app.py", "import ｐkg\n\nｐkg.chain()\n", "app.py:3: uses pkg.chain, which pkg no longer defines"),
    ],
)
def test_every_way_to_refer_to_the_module_is_still_read(box: Sandbox, path: str, text: str, expected: str) -> None:
    base_files = {"pkg/__init__.py": LIB, "pkg/sub/__init__.py": "", path: text, **UNRELATED}
    found, parses = _check(box, base_files, {"pkg/__init__.py": LIB_AFTER})
    assert found == [expected]
    assert parses == 3


def test_the_module_itself_is_read_for_its_own_uses(box: Sandbox) -> None:
    found, parses = _check(
        box,
        {"lib.py": LIB + "\n__all__ = ['chain', 'other']\n", **UNRELATED},
        {"lib.py": LIB_AFTER + "\n__all__ = ['chain', 'other']\n"},
    )
    assert found == ["lib.py:4: lists 'chain' in __all__, which lib no longer defines"]
    assert parses == 2
