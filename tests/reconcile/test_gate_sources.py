"""The gate's stages read and parse each blob once: what is kept is kept by blob id (a path of a commit named by a ref
that moves is read again), and a check that reads a blob again finds what it found the first time."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.reconcile._sources import Sources
from plait.reconcile.gate import Gate
from plait.reconcile.semantic import find_breakage


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _value(tree: ast.Module | None) -> object:
    assert tree is not None
    statement = tree.body[0]
    assert isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
    return statement.value.value


def test_a_blob_is_parsed_once_wherever_it_is_and_each_version_of_a_path_on_its_own(box: Sandbox) -> None:
    first = box.start({"a.py": "X = 1\n", "copy/a.py": "X = 1\n"})
    second = box.commit({"a.py": "X = 2\n"}, parent=first)
    assert box.repo is not None
    sources = Sources(box.repo)

    trees = [
        sources.tree(sources.blob(c, p) or "") for c, p in ((first, "a.py"), (first, "copy/a.py"), (second, "a.py"))
    ]

    assert [_value(t) for t in trees] == [1, 1, 2]
    assert sources.parses == 2  # one blob at two paths, and the path's second version
    assert sources.blob(second, "copy/a.py") == sources.blob(first, "a.py")
    assert sources.tree(sources.blob(second, "copy/a.py") or "") is trees[0]


def test_a_ref_is_read_again_where_it_points_now(box: Sandbox) -> None:
    first = box.start({"a.py": "X = 1\n"})
    assert box.repo is not None
    sources = Sources(box.repo)
    assert sources.text("main", "a.py") == "X = 1\n"

    git(box.root, "update-ref", "refs/heads/main", box.commit({"a.py": "X = 2\n"}, parent=first))

    assert sources.text("main", "a.py") == "X = 2\n"
    assert sources.text(first, "a.py") == "X = 1\n"
    assert sources.text(first, "gone.py") is None


def test_the_gate_parses_each_python_blob_of_a_check_once_across_its_stages(box: Sandbox) -> None:
    lib = "def helper():\n    return 1\n\n\ndef other():\n    return 2\n"
    base = box.start({"lib.py": lib, "app.py": "from lib import helper\n\nhelper()\n"})
    combined = box.commit(
        {"lib.py": "def other():\n    return 2\n", "use.py": "import lib\n\nlib.helper()\n"}, parent=base
    )
    assert box.repo is not None
    gate = Gate(box.repo, base=base, detect=False)

    result = asyncio.run(gate.check(combined))

    assert not result.passed and result.stage == "semantic"
    assert result.output == find_breakage_output(box, base, combined)
    # lib.py at the base and now, use.py, app.py (which uses the name lib.py lost): four blobs, each parsed once
    assert gate.sources.parses == 4


def find_breakage_output(box: Sandbox, base: str, commit: str) -> str:
    assert box.repo is not None
    return "\n".join(str(b) for b in find_breakage(box.repo, base, commit))
