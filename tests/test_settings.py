from __future__ import annotations

from pathlib import Path

import pytest

from plait.errors import UsageError
from plait.settings import load_settings, user_config_path


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_each_layer_overrides_the_one_below_and_says_so(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    _write(user_config_path(env), 'model = "anthropic:claude-sonnet-4-5"\nmax_steps = 10\nmax_tokens = 500\n')
    repo = tmp_path / "repo"
    _write(repo / ".plait.toml", "max_steps = 5\noutput_limit = 3000\n")
    env["PLAIT_OUTPUT_LIMIT"] = "4000"
    env["PLAIT_COMMAND_TIMEOUT"] = "9.5"

    layered = load_settings(repo, flags={"command_timeout": 12.0, "model": None}, env=env)

    s = layered.settings
    assert (s.model, s.max_tokens, s.max_steps, s.output_limit, s.command_timeout) == (
        "anthropic:claude-sonnet-4-5",
        500,
        5,
        4000,
        12.0,
    )
    sources = {key: source for key, _, source in layered.rows()}
    assert sources["model"].startswith("user file") and sources["max_tokens"].startswith("user file")
    assert sources["max_steps"].startswith("repo file")
    assert sources["output_limit"] == "env PLAIT_OUTPUT_LIMIT"
    assert sources["command_timeout"] == "flag"
    assert sources["max_format_errors"] == "default"


def test_secrets_are_masked_when_shown(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PLAIT_ANTHROPIC_API_KEY": "sk-ant-very-secret-value-1234"}
    rows = {key: value for key, value, _ in load_settings(None, env=env).rows()}
    assert rows["anthropic_api_key"] == "****1234"
    assert "very-secret" not in str(rows)


def test_prices_from_config_extend_the_table(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(repo / ".plait.toml", '[prices."openai-compatible:local@http://x/v1"]\ninput = 0.1\noutput = 0.2\n')
    s = load_settings(repo, env={"HOME": str(tmp_path)}).settings
    assert s.prices["openai-compatible:local@http://x/v1"].output == 0.2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("max_stepz = 3\n", "unknown setting 'max_stepz'"),
        ("max_steps = 0\n", "setting 'max_steps' from repo file"),
        ("max_steps = [\n", "cannot read config file"),
    ],
)
def test_a_bad_config_file_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path / "repo" / ".plait.toml", text)
    with pytest.raises(UsageError, match=message):
        load_settings(tmp_path / "repo", env={"HOME": str(tmp_path)})


def test_a_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="env PLAIT_MAX_STEPS"):
        load_settings(None, env={"HOME": str(tmp_path), "PLAIT_MAX_STEPS": "many"})
