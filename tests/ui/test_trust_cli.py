"""`plait trust` and what the CLI says of a repository's own `.plait.toml`: the real command, a real repository."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import Plait, git

WIDE = '[sandbox]\nlayer = "none"\nenv_passthrough = ["AWS_*"]\n'


def _config(plait: Plait, root: Path) -> tuple[dict[str, dict[str, str]], str]:
    result = plait("config", "--json", cwd=root)
    assert result.code == 0, result.err
    shown: dict[str, dict[str, str]] = result.json()
    return shown, result.err


def test_trust_list_and_remove(plait: Plait, project: Path, env: dict[str, str]) -> None:
    (project / ".plait.toml").write_text(WIDE)
    shown, err = _config(plait, project)
    assert err.count("\n") == 1 and "ignored sandbox.layer, sandbox.env_passthrough from" in err
    assert "not trusted" in shown["sandbox.layer (ignored)"]["source"] and '"none"' not in shown["sandbox"]["value"]

    (project / "sub").mkdir()
    trusted = plait("trust", "sub", cwd=project)
    assert trusted.code == 0, trusted.err
    root = str(project.resolve())
    assert f"trusted {root}" in trusted.out and "sandbox.layer, sandbox.env_passthrough" in trusted.out
    assert root in (Path(env["XDG_CONFIG_HOME"]) / "plait" / "trust.toml").read_text()
    shown, err = _config(plait, project)
    assert err == "" and '"layer":"none"' in shown["sandbox"]["value"].replace(" ", "")
    assert plait("trust", "--list", cwd=project).out.split() == [root, "trusted"]

    (project / ".plait.toml").write_text(WIDE + "[sandbox.limits]\nprocesses = 100000\n")
    assert ".plait.toml changed since" in plait("trust", "--list", cwd=project).out
    shown, err = _config(plait, project)
    assert "changed since you trusted this repository" in err and "sandbox.limits.processes" in err
    assert shown["sandbox.layer (ignored)"]["source"].endswith("changed since trusted")

    removed = plait("trust", "--remove", ".", cwd=project)
    assert removed.code == 0 and f"no longer trusted: {root}" in removed.out
    assert "no trusted repositories" in plait("trust", "--list", cwd=project).out
    again = plait("trust", "--remove", str(project), cwd=project)
    assert again.code == 2 and "is not a trusted repository" in again.err


def test_an_agents_change_to_the_repository_file_is_flagged_and_not_trusted(
    plait: Plait, project: Path, tmp_path: Path
) -> None:
    assert plait("trust", cwd=project).code == 0  # trusted while it has no .plait.toml
    script = tmp_path / "agent.yaml"
    write = {"name": "write_file", "arguments": {"path": ".plait.toml", "content": WIDE}}
    finish = {"name": "finish", "arguments": {"summary": "tuned the sandbox"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [write]}, {"tool_calls": [finish]}]}))
    run = plait("run", "speed up", "--single", "--model", f"scripted:{script}", "--json", "--quiet", cwd=project)
    assert run.code == 0, run.err
    data = run.json()
    assert data["config_changes"] == ["main"]
    listed = plait("runs", "--json", cwd=project).json()
    assert listed[0]["config_changes"] == ["main"]

    applied = plait("apply", data["run_id"], cwd=project)
    assert applied.code == 0, applied.err
    assert f"task main of run {data['run_id']} changed .plait.toml" in applied.err
    assert "review it before you trust this repository" in applied.err and "git diff" in applied.err
    assert (project / ".plait.toml").read_text() == WIDE and git(project, "status", "--porcelain") == ""

    shown, err = _config(plait, project)
    assert "changed since you trusted this repository" in err
    assert '"none"' not in shown["sandbox"]["value"]


def test_apply_says_nothing_of_a_run_that_left_the_file_alone(plait: Plait, project: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.yaml"
    write = {"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}
    finish = {"name": "finish", "arguments": {"summary": "wrote hello.txt"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [write]}, {"tool_calls": [finish]}]}))
    run = plait("run", "hello", "--single", "--model", f"scripted:{script}", "--json", "--quiet", cwd=project)
    assert run.code == 0, run.err
    assert run.json()["config_changes"] == []
    applied = plait("apply", run.json()["run_id"], cwd=project)
    assert applied.code == 0 and ".plait.toml" not in applied.err


def test_the_run_itself_says_an_agent_changed_the_repository_file(plait: Plait, project: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.yaml"
    write = {"name": "write_file", "arguments": {"path": ".plait.toml", "content": WIDE}}
    finish = {"name": "finish", "arguments": {"summary": "tuned the sandbox"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [write]}, {"tool_calls": [finish]}]}))
    run = plait("run", "speed up", "--single", "--model", f"scripted:{script}", "--no-tui", cwd=project)
    assert run.code == 0, run.err
    assert "note:" in run.err and "main" in run.err and ".plait.toml" in run.err
