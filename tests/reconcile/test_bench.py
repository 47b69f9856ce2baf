"""`plait bench reconcile` on a tiny synthetic history whose merges fall in each scoring category."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.reconcile.bench import run_track_a, run_track_b, scratch_clone, static_problems, undefined_names
from plait.reconcile.ladder import default_resolvers

CALC = "def add(a, b):\n    return a + b\n"
LOG = "Changes\n=======\n\n- start\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _merge(
    box: Sandbox, main: str, ours: dict[str, str | None], theirs: dict[str, str | None], result: dict[str, str | None]
) -> str:
    """Two commits on `main` and the merge commit a developer made of them, with `result` as its content."""
    left = box.commit(ours, "ours", parent=main)
    right = box.commit(theirs, "theirs", parent=main)
    tree = git(box.root, "rev-parse", box.commit(result, "tree", parent=left) + "^{tree}")
    return git(box.root, "commit-tree", tree, "-p", left, "-p", right, "-m", "merge")


def _history(box: Sandbox) -> dict[str, str]:
    """Four merges: git-clean, resolved as committed, resolved otherwise, and unresolvable."""
    main = box.start({"calc.py": CALC, "CHANGES.rst": LOG, "a.txt": "a\n"})
    merges: dict[str, str] = {}
    main = merges["clean"] = _merge(
        box, main, {"a.txt": "a\nours\n"}, {"b.txt": "b\n"}, {"a.txt": "a\nours\n", "b.txt": "b\n"}
    )
    mul, div = "\n\ndef mul(a, b):\n    return a * b\n", "\n\ndef div(a, b):\n    return a / b\n"
    main = merges["same"] = _merge(
        box, main, {"calc.py": CALC + mul}, {"calc.py": CALC + div}, {"calc.py": CALC + mul + div}
    )
    main = merges["differs"] = _merge(
        box,
        main,
        {"CHANGES.rst": LOG + "- ours\n"},
        {"CHANGES.rst": LOG + "- theirs\n"},
        {"CHANGES.rst": LOG + "- theirs\n- ours\n"},
    )
    add = CALC + mul + div
    main = merges["unresolved"] = _merge(
        box,
        main,
        {"calc.py": add.replace("a + b", "a + b + 0")},
        {"calc.py": add.replace("a + b", "b + a")},
        {"calc.py": add},
    )
    git(box.root, "update-ref", "refs/heads/main", main)
    return merges


def _fingerprint(box: Sandbox) -> tuple[str, str, str]:
    return git(box.root, "count-objects", "-v"), git(box.root, "for-each-ref"), git(box.root, "status", "--porcelain")


def test_track_a_scores_each_kind_of_merge_and_never_writes_the_studied_repo(box: Sandbox) -> None:
    merges = _history(box)
    before = _fingerprint(box)

    with scratch_clone(box.root) as clone:
        track = run_track_a(clone, name="toy", resolvers=default_resolvers())

    by_commit = {case.commit: case for case in track.cases}
    assert (by_commit[merges["clean"]].git, by_commit[merges["clean"]].plait) == ("clean_same", "same")
    assert (by_commit[merges["same"]].git, by_commit[merges["same"]].plait) == ("conflict", "same")
    assert by_commit[merges["same"]].rungs == ("structured",)
    assert (by_commit[merges["differs"]].git, by_commit[merges["differs"]].plait) == ("conflict", "differs")
    assert (by_commit[merges["unresolved"]].git, by_commit[merges["unresolved"]].plait) == ("conflict", "unresolved")
    assert by_commit[merges["unresolved"]].unresolved == ("calc.py",)
    summary = track.summary()
    assert summary["merges"] == 4 and summary["git_clean_same"] == 1 and summary["git_conflicts"] == 3
    assert summary["regressions"] == [] and summary["conflicts_resolved_same"] == 1
    assert summary["conflicts_resolved_differs"] == 1 and summary["conflicts_unresolved"] == 1
    assert summary["files_by_rung"] == {"structured": 1, "deterministic": 1}
    assert _fingerprint(box) == before


def test_a_merge_git_itself_cannot_make_is_skipped_and_counted_not_a_crash(box: Sandbox) -> None:
    """A history that once merged an unrelated one (a project imported whole): git's merge-tree refuses it."""
    main = box.start({"a.txt": "a\n"})
    other = box.commit({"b.txt": "b\n"}, "an unrelated root")
    tree = git(box.root, "rev-parse", box.commit({"a.txt": "a\n", "b.txt": "b\n"}, "tree", parent=main) + "^{tree}")
    joined = git(box.root, "commit-tree", tree, "-p", main, "-p", other, "-m", "merge unrelated")
    git(box.root, "update-ref", "refs/heads/main", joined)

    with scratch_clone(box.root) as clone:
        track = run_track_a(clone, name="toy", resolvers=default_resolvers())

    assert track.cases == [] and track.skipped == [joined]
    assert track.summary()["skipped_git_cannot_merge"] == [joined]


def test_track_b_replays_commits_as_parallel_branches_and_counts_new_breakage(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC, "util.py": "X = 1\n", "app.py": "import util\n"})
    c1 = box.commit({"calc.py": CALC.replace("a + b", "b + a")}, "one", parent=base)
    c2 = box.commit(
        {"calc.py": CALC.replace("a + b", "a + b + 1"), "util.py": "X = 1\n\n\ndef helper():\n    return X\n"},
        "two",
        parent=c1,
    )
    c3 = box.commit({"app.py": "import util\nfrom util import helper\n\nhelper()\n"}, "three", parent=c2)
    git(box.root, "update-ref", "refs/heads/main", c3)

    with scratch_clone(box.root) as clone:
        track = run_track_b(clone, name="toy", resolvers=default_resolvers(), k=3, windows=5)

    (window,) = track.windows
    assert window.base == base and window.transplant_conflicts == 1
    assert (window.git_integrated, window.plait_integrated) == (2, 2)
    assert not window.git_equal_real and not window.plait_equal_real
    assert window.plait_new_problems == ("app.py: cannot import helper from util",)
    summary = track.summary()
    assert (
        summary["branches"] == 3 and summary["plait_windows_new_breakage"] == 1 and summary["git_windows_all_in"] == 0
    )


def test_undefined_names_ignore_builtins_and_bound_names() -> None:
    source = "import os\n\n\ndef f(x):\n    return os.path.join(x, y) + str(len(x))\n\n\nclass K:\n    z = f\n"
    assert undefined_names(source) == {"y"}
    assert undefined_names("from m import *\nprint(q)\n") == set()
    assert undefined_names("def broken(:\n") == {"<syntax>"}


def test_static_problems_read_a_commit_tree(box: Sandbox) -> None:
    base = box.start(
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from .b import there, missing\nprint(nowhere)\n",
            "pkg/b.py": "there = 1\n",
        }
    )
    assert static_problems(box.repo, base, ["pkg/a.py", "pkg/b.py", "README"]) == {  # type: ignore[arg-type]
        "pkg/a.py: cannot import missing from pkg.b",
        "pkg/a.py: undefined name nowhere",
    }


def test_the_command_prints_json_for_scripts(box: Sandbox) -> None:
    _history(box)
    done = subprocess.run(
        [sys.executable, "-m", "plait", "bench", "reconcile", "--repo", str(box.root), "--track", "a", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["track_a"]["merges"] == 4 and data["track_a"]["conflicts_resolved_same"] == 1
    assert len(data["track_a_conflicts"]) == 3
    table = subprocess.run(
        [sys.executable, "-m", "plait", "bench", "reconcile", "--repo", str(box.root), "--track", "a", "--limit", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (
        table.returncode == 0
        and "resolved to the committed tree" in table.stdout
        and "2 two-parent merges" in table.stdout
    )
    missing = subprocess.run(
        [sys.executable, "-m", "plait", "bench", "reconcile", "--repo", str(box.root / "nope")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2 and "does not exist" in missing.stderr
