"""A configuration that cannot work stops `plait run` and `plait integrate` before anything is spent, with one line that
says which setting, where it came from and what to do: a verify command that cannot run in the sandbox, a bad
value or an unknown key below a table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import Plait, git

from plait.workspace.sandbox import probe


def _script(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps({"turns": turns}))
    return f"scripted:{path}"


def test_a_verify_command_that_cannot_run_is_one_line_and_exit_2(plait: Plait, project: Path, tmp_path: Path) -> None:
    model = _script(tmp_path, [])
    env = {"PLAIT_VERIFY_COMMAND": "python3.99 -m pytest"}
    result = plait("run", "do it", "--single", "--quiet", "--model", model, cwd=project, extra_env=env)
    assert result.code == 2 and result.out == ""
    assert result.err.strip().count("\n") == 0, result.err
    assert result.err.startswith("plait: error: verify command `python3.99 -m pytest` cannot run in the sandbox: ")
    assert "python3.99: command not found" in result.err

    git(project, "branch", "work")
    merged = plait("integrate", "work", "--no-llm", "--verify", "python3.99 -m pytest", cwd=project)
    assert merged.code == 2 and merged.err.strip().count("\n") == 0, merged.err
    assert "python3.99: command not found" in merged.err


def test_a_bad_nested_setting_names_its_full_key_and_its_layer(plait: Plait, project: Path, tmp_path: Path) -> None:
    (project / ".plait.toml").write_text("[sandbox.limits]\nmemory_mb = 1\n")
    result = plait("run", "do it", "--single", "--model", _script(tmp_path, []), "--yes", cwd=project)
    assert result.code == 2 and result.err.strip().count("\n") == 0, result.err
    where = project / ".plait.toml"
    assert f"setting 'sandbox.limits.memory_mb' from repo file {where}: Input should be greater" in result.err

    (project / ".plait.toml").write_text("[sandbox.limits]\nmemroy_mb = 100\n")
    result = plait("run", "do it", "--single", "--model", _script(tmp_path, []), "--yes", cwd=project)
    assert result.code == 2 and result.err.strip().count("\n") == 0, result.err
    assert f"unknown setting 'sandbox.limits.memroy_mb' in repo file {where}; sandbox.limits takes " in result.err
    assert "memory_mb" in result.err


def test_a_verify_command_under_a_hidden_directory_runs_once_the_users_rule_shows_it(
    plait: Plait, project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    tools = tmp_path / "tools"  # under the host's /tmp, which the agents' private /tmp hides
    (tools / "bin").mkdir(parents=True)
    script = tools / "bin" / "check"
    script.write_text("#!/bin/sh\necho checked\n")
    script.chmod(0o755)
    done = [{"tool_calls": [{"name": "finish", "arguments": {"summary": "nothing to do"}}]}]
    extra = {"PLAIT_VERIFY_COMMAND": str(script)}
    if not {"bwrap", "landlock"} & set(probe().usable()):
        pytest.skip("no OS sandbox hides /tmp here")
    args = ["run", "do it", "--single", "--model"]
    stopped = plait(*args, _script(tmp_path, []), "--quiet", cwd=project, extra_env=extra)
    assert stopped.code == 2 and stopped.err.strip().count("\n") == 0, stopped.err
    assert f"{script}: No such file or directory ({script} is outside what the sandbox shows" in stopped.err
    assert f"add a read+allow path rule for {tools} (sandbox.paths), or set verify_command" in stopped.err

    config = Path(env["XDG_CONFIG_HOME"]) / "plait" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[[sandbox.paths]]\nverdict = "allow"\naccess = "read"\npath = "{tools}"\n')
    ran = plait(*args, _script(tmp_path, done), "--no-tui", cwd=project, extra_env=extra)
    assert ran.code == 0, ran.err
    assert f"run verify command `{script}` passes at the base; the gate runs it on the agents' work" in ran.err
