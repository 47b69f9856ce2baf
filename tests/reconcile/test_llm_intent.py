"""What a side's commit messages tell the LLM rung: bots' boilerplate dropped, the rest bounded."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import sandbox

from plait.reconcile._intent import clean_message, region_commits
from plait.reconcile.types import MergeSite

PRE_COMMIT = """[pre-commit.ci] pre-commit autoupdate
updates:
- [github.com/psf/black: 23.1.0 → 23.3.0](https://github.com/psf/black/compare/23.1.0...23.3.0)
- https://github.com/asottile/reorder_python_imports → https://github.com/asottile/reorder-python-imports
"""
DEPENDABOT = """Bump the github-actions group with 4 updates
---
updated-dependencies:
- dependency-name: actions/cache
  dependency-type: direct:production
  dependency-group: github-actions
"""


def test_pre_commit_and_dependency_bot_lines_are_dropped_and_what_explains_a_change_is_kept() -> None:
    text = clean_message(PRE_COMMIT + "fix check for empty required block\nupdates: the parser now skips it\n", 800)
    assert text == "fix check for empty required block\nupdates: the parser now skips it"
    assert clean_message(DEPENDABOT, 800) == "Bump the github-actions group with 4 updates"


def test_a_commit_body_wrapped_over_lines_is_read_as_its_sentences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = sandbox(tmp_path, monkeypatch)
    base = box.start({"h.py": "a = 1\nb = 2\nc = 3\n"})
    assert box.repo is not None
    body = (
        "Quote extended parameters\n\nSo that extended parameter headers (with charset and language\n"
        "identifiers) conform with standards.\n- keeps the charset\n- drops the quotes\n"
    )
    ours = box.commit({"h.py": "a = 1\nb = 20\nc = 3\n"}, body, parent=base)
    theirs = box.commit({"h.py": "a = 1\nb = 21\nc = 3\n"}, "other", parent=base)
    (commit,) = region_commits(MergeSite(box.repo, ours, theirs), "ours", "h.py", (1, 2), set(), 3)
    assert commit.subject == "Quote extended parameters"
    assert commit.body == (
        "So that extended parameter headers (with charset and language identifiers) conform with standards.",
        "- keeps the charset",
    )
