"""What a side's commit messages tell the LLM rung: bots' boilerplate dropped, the rest bounded."""

from __future__ import annotations

from plait.reconcile._intent import clean_message

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
