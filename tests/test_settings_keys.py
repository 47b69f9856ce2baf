"""A bad setting is named as the user wrote it, below a table too (`sandbox.limits.memory_mb`, `experts[0].name`),
with the layer that gave that very key; an unknown key below a table is named with the keys that table takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plait.errors import UsageError
from plait.settings import load_settings, user_config_path


def _error(tmp_path: Path, repo_file: str = "", user_file: str = "", **env: str) -> str:
    home = {"HOME": str(tmp_path / "home"), **env}
    user_config_path(home).parent.mkdir(parents=True, exist_ok=True)
    user_config_path(home).write_text(user_file)
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (repo / ".plait.toml").write_text(repo_file)
    with pytest.raises(UsageError) as raised:
        load_settings(repo, env=home, report=None)
    return str(raised.value)


def test_a_bad_value_below_a_table_is_named_by_its_full_key_and_its_file(tmp_path: Path) -> None:
    said = _error(tmp_path, "[sandbox.limits]\nmemory_mb = 1\n")
    assert said == (
        f"setting 'sandbox.limits.memory_mb' from repo file {tmp_path / 'repo' / '.plait.toml'}: "
        "Input should be greater than or equal to 16"
    )


def test_the_layer_named_is_the_one_that_gave_the_bad_key_not_the_last_to_touch_its_table(tmp_path: Path) -> None:
    said = _error(tmp_path, '[sandbox]\npreset = "strict"\n', "[sandbox.limits]\nmemory_mb = 2\n")
    assert said.startswith(
        f"setting 'sandbox.limits.memory_mb' from user file {user_config_path({'HOME': str(tmp_path / 'home')})}"
    )
    said = _error(tmp_path, PLAIT_SANDBOX=json.dumps({"limits": {"processes": 1}}))
    assert said.startswith("setting 'sandbox.limits.processes' from env PLAIT_SANDBOX: ")


def test_an_unknown_key_below_a_table_is_named_with_the_keys_that_table_takes(tmp_path: Path) -> None:
    said = _error(tmp_path, "[sandbox.limits]\nmemroy_mb = 100\n")
    where = tmp_path / "repo" / ".plait.toml"
    assert said.startswith(f"unknown setting 'sandbox.limits.memroy_mb' in repo file {where}; sandbox.limits takes ")
    assert "memory_mb" in said and "processes" in said
    assert "sandbox takes preset, layer" in _error(tmp_path, '[sandbox]\nlayre = "bwrap"\n')


def test_entries_of_lists_and_tables_are_named_as_written(tmp_path: Path) -> None:
    assert _error(tmp_path, "[[experts]]\nname = 1\n").startswith("setting 'experts[0].name' from repo file ")
    said = _error(tmp_path, '[prices."openai:x"]\ninput = "cheap"\n')
    assert said.startswith("setting 'prices.\"openai:x\".input' from repo file ")
