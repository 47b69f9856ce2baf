"""The semantic check reads a tree as well as a commit: the ladder checks the trees of its trial merges, which have
no parents to compare with."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plait.reconcile.semantic import find_breakage
from plait.workspace import Repo


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def test_a_tree_s_undefined_names_and_removed_names_are_both_found(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "config", "user.email", "t@example.com")
    _git(tmp_path, "config", "user.name", "t")
    (tmp_path / "util.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "app.py").write_text("import util\n\n\ndef run():\n    return util.helper()\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "base")
    base = _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "util.py").write_text("def assist():\n    return 1\n")
    (tmp_path / "app.py").write_text("import util\n\n\ndef run():\n    return util.helper() + missing()\n")
    _git(tmp_path, "add", "-A")
    tree = _git(tmp_path, "write-tree")

    found = {(b.path, b.message.split(" (")[0]) for b in find_breakage(Repo.discover(tmp_path), base, tree)}

    removed = ("app.py", "uses util.helper, which util no longer defines")
    assert found == {removed, ("app.py", "undefined name 'missing'")}
