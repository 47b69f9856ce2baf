"""A repository with branches for each kind of two-branch integrate, and what `plait integrate` printed for it with
the run's own names (run id, merge commits) taken out, so that two runs of one command line can be compared."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

GREET = 'def greet(name):\n    return "hello " + name\n\n\ndef part(name):\n    return "bye " + name\n'
CHANGES = "# Changes\n\n## 1.0\n\n- first\n"
DATES = {"GIT_AUTHOR_DATE": "2026-01-02T03:04:05+00:00", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05+00:00"}
"""Fixed commit dates: the branches, and the merges plait makes, are the same commits on every run."""

BRANCHES: dict[str, dict[str, str | None]] = {
    "hello": {"greet.py": GREET.replace('"hello "', '"hello, "')},
    "bye": {"greet.py": GREET.replace('"bye "', '"goodbye "'), "extra.py": "X = 1\n"},
    "note-a": {"CHANGES.md": CHANGES.replace("- first\n", "- first\n- from a\n")},
    "note-b": {"CHANGES.md": CHANGES.replace("- first\n", "- first\n- from b\n")},
    "hi": {"greet.py": GREET.replace('"hello "', '"hi "')},
    "hey": {"greet.py": GREET.replace('"hello "', '"hey "')},
    "drop-part": {"greet.py": GREET.split("\n\n\n")[0] + "\n"},
    "use-part": {"use.py": "from greet import part\n\nprint(part('x'))\n"},
    "bad-syntax": {"broken.py": "def f(:\n    pass\n"},
}
"""Two branches merged cleanly (hello, bye), a conflict a rung resolves (note-a, note-b), one none resolves
(hi, hey), one the semantic check rejects (drop-part, use-part), one the parse check rejects (bad-syntax)."""

_RUN_ID = re.compile(r"integrate-\d{8}-\d{6}-[0-9a-f]+")
_SHA = re.compile(r"\b[0-9a-f]{40}\b|\b[0-9a-f]{10}\b")


def _git(root: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, input=stdin, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def make_branches(root: Path) -> None:
    """Commit the base (greet.py, CHANGES.md) on the checked-out branch, then each of `BRANCHES` on top of it."""
    (root / "greet.py").write_text(GREET)
    (root / "CHANGES.md").write_text(CHANGES)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base", env=DATES)
    index = {"GIT_INDEX_FILE": str(root / ".git" / "cases-index"), **DATES}
    for name, files in BRANCHES.items():
        _git(root, "read-tree", "HEAD", env=index)
        for path, text in files.items():
            blob = _git(root, "hash-object", "-w", "--stdin", stdin=text)
            _git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=index)
        tree = _git(root, "write-tree", env=index)
        sha = _git(root, "commit-tree", tree, "-p", "HEAD", "-m", f"{name}: change", env=index)
        _git(root, "update-ref", f"refs/heads/{name}", sha)


def normalized(text: str) -> str:
    """`text` with the run id and every commit id written as placeholders."""
    return _SHA.sub("<sha>", _RUN_ID.sub("<run>", text))
