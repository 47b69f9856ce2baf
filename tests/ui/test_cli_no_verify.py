"""`plait integrate --no-verify`: the verify stage is skipped, and no gate worktree is checked out for it."""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait, git
from test_cli_integrate import GREET, branch

BREAKS = "! grep -q 'hello, ' greet.py"
"""A verify command that passes at the base and fails on the branch."""


def test_no_verify_skips_a_failing_verify_command_without_a_gate_worktree(plait: Plait, project: Path) -> None:
    branch(project, "comma", {"greet.py": GREET.replace('"hello "', '"hello, "')})
    failing = plait("integrate", "comma", "--no-llm", "--verify", BREAKS, "--json", cwd=project)
    assert failing.code == 1, failing.err
    result = plait("integrate", "comma", "--no-llm", "--verify", BREAKS, "--no-verify", "--json", cwd=project)
    assert result.code == 0, result.err
    data = result.json()
    assert [b["outcome"] for b in data["branches"]] == ["integrated"]
    assert '"hello, "' in git(project, "show", f"{data['branch']}:greet.py")
    assert not (project / ".git" / "plait" / "worktrees" / data["run_id"]).exists()
