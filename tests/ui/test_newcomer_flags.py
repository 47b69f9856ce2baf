"""More of what a newcomer tripped over, through the real CLI: NO_COLOR, exit codes, `plait config`, flags."""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait

from plait.sandbox_presets import PRESETS


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


def _config(plait: Plait, project: Path, extra: dict[str, str] | None = None) -> dict[str, dict[str, str]]:
    result = plait("config", "--json", cwd=project, extra_env=extra)
    assert result.code == 0, result.err
    data: dict[str, dict[str, str]] = result.json()
    return data


def test_config_shows_a_key_set_in_the_environment_masked(plait: Plait, project: Path) -> None:
    unset = _config(plait, project)["openai_api_key"]
    assert unset == {"value": "", "source": "default"}
    key = "sk-test-0123456789abcdefWXYZ"
    shown = _config(plait, project, {"OPENAI_API_KEY": key})["openai_api_key"]
    assert shown == {"value": "****WXYZ", "source": "env OPENAI_API_KEY"}


def test_config_shows_the_verify_command_it_detects(plait: Plait, project: Path) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "test_greet.py").write_text("def test_it():\n    assert True\n")
    row = _config(plait, project)["verify_command"]
    assert row["source"] == "detected" and "pytest" in row["value"]
    given = _config(plait, project, {"PLAIT_VERIFY_COMMAND": "make check"})["verify_command"]
    assert given == {"value": "make check", "source": "env PLAIT_VERIFY_COMMAND"}


def test_config_still_shows_the_settings_when_one_is_broken(plait: Plait, project: Path) -> None:
    (project / ".plait.toml").write_text("max_steps = 0\nmax_tokens = 1000\n")
    result = plait("config", cwd=project, extra_env={"COLUMNS": "400"})
    assert result.code == 2
    lines = {line.split("│")[1].strip(): line for line in result.out.splitlines() if line.count("│") == 4}
    assert "BROKEN, not used: setting 'max_steps' from repo file" in lines["max_steps"]
    assert "1000" in lines["max_tokens"] and "repo file" in lines["max_tokens"]
    assert "concurrency" in lines
    assert result.err.startswith("plait: error: setting 'max_steps' from repo file")


def test_an_unknown_setting_says_which_was_meant(plait: Plait, project: Path) -> None:
    (project / ".plait.toml").write_text("max_step = 10\n[sandbox]\npreest = 'strict'\n")
    result = plait("config", cwd=project)
    assert result.code == 2
    assert "unknown setting 'max_step' in " in result.err and "did you mean 'max_steps'?" in result.err
    assert "unknown setting 'sandbox.preest'" in result.err and "did you mean 'preset'?" in result.err


def test_a_global_dash_c_runs_plait_in_that_directory(plait: Plait, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = plait("-C", str(project), "runs", "--json", cwd=elsewhere)
    assert listed.code == 0 and listed.json() == [], listed.err
    relative = plait("-C", "project", "config", "--json", cwd=tmp_path)
    assert relative.code == 0, relative.err
    missing = plait("-C", "nowhere", "runs", cwd=tmp_path)
    assert missing.code == 3 and missing.err.startswith("plait: error: cannot work in nowhere (-C)")


def test_shell_completion_is_offered_and_completes(plait: Plait, project: Path) -> None:
    script = plait("--show-completion", "bash", cwd=project)
    assert script.code == 0 and "_PLAIT_COMPLETE=complete_bash" in script.out
    env = {"_PLAIT_COMPLETE": "complete_bash", "COMP_WORDS": "plait gc --dr", "COMP_CWORD": "2"}
    assert plait(cwd=project, extra_env=env).out.split() == ["--dry-run"]


def test_the_readme_lists_every_sandbox_preset() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for name in PRESETS:
        assert f"`{name}` (" in readme, f"the README does not describe the {name} preset"
