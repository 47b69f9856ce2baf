"""More of what a newcomer tripped over, through the real CLI: NO_COLOR, exit codes, `plait config`, flags."""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait


def test_no_color_writes_no_style_at_all(plait: Plait, project: Path) -> None:
    styled = plait("config", cwd=project, extra_env={"FORCE_COLOR": "1"})
    assert styled.code == 0 and "\x1b[" in styled.out, "a forced terminal is styled (the test can fail)"
    plain = plait("config", cwd=project, extra_env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert plain.code == 0 and "\x1b[" not in plain.out + plain.err
    failed = plait("show", "nosuchrun", cwd=project, extra_env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert failed.code != 0 and "\x1b[" not in failed.err and "plait: error:" in failed.err


def test_policy_check_exits_1_on_deny_and_0_otherwise(plait: Plait, project: Path) -> None:
    assert plait("policy", "check", "git push", cwd=project).code == 1
    assert plait("policy", "check", "ls", cwd=project).code == 0
    assert plait("policy", "check", "curl https://x", "--preset", "standard", cwd=project).code == 0


def test_single_and_plan_together_are_a_usage_error(plait: Plait, project: Path) -> None:
    (project / "plan.yaml").write_text("tasks: []\n")
    result = plait("run", "do it", "--single", "--plan", "plan.yaml", "--model", "openai:gpt-5.1", cwd=project)
    assert result.code == 2
    assert result.err.strip() == (
        "plait: error: --single and --plan exclude each other: --single runs one agent without a plan"
    )
    assert not (project / ".git" / "plait").exists()
