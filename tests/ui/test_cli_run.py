"""`plait run` end to end: the real CLI, real git, and real SDKs talking HTTP to a local server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import Plait, git

from wire_server import WireServer


def _agent_turns(fmt: str, body: dict[str, Any]) -> dict[str, Any]:
    """A reactive model: write a file, run a command, check its output, finish."""
    assistant_turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if assistant_turns == 0:
        content = 'def greet(name):\n    return "hello, " + name + "!"\n'
        return {
            "text": "Rewriting greet.",
            "tool_calls": [{"name": "write_file", "arguments": {"path": "greet.py", "content": content}}],
        }
    if assistant_turns == 1:
        command = "python3 -c 'import greet; print(greet.greet(\"ann\"))'"
        return {"tool_calls": [{"name": "run", "arguments": {"command": command}}]}
    last = str(body["messages"][-1])
    assert "hello, ann!" in last, last
    return {"tool_calls": [{"name": "finish", "arguments": {"summary": "greet punctuates now"}}]}


def _assert_untouched(project: Path, head: str) -> None:
    assert git(project, "status", "--porcelain") == ""
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "branch", "--show-current") == "main"
    assert (project / "greet.py").read_text() == 'def greet(name):\n    return "hello " + name\n'


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_run_commits_the_agents_work_on_its_branch(plait: Plait, project: Path, provider: str) -> None:
    head = git(project, "rev-parse", "HEAD")
    with WireServer(_agent_turns) as server:
        if provider == "anthropic":
            args, extra = (
                ["--model", "anthropic:claude-sonnet-4-5"],
                {
                    "ANTHROPIC_API_KEY": "test-key",
                    "ANTHROPIC_BASE_URL": server.url,
                },
            )
        else:
            args, extra = ["--model", f"openai-compatible:qwen@{server.openai_url}"], {}
        result = plait("run", "Make greet punctuate", "--single", *args, "--json", cwd=project, extra_env=extra)

    assert result.code == 0, result.err
    data = result.json()
    assert data["status"] == "done" and data["summary"] == "greet punctuates now"
    assert data["branch"] == f"plait/{data['run_id']}/main" and data["files"] == ["greet.py"]
    assert data["usage"]["input_tokens"] > 0
    assert "hello, " in git(project, "show", f"{data['branch']}:greet.py")
    assert git(project, "rev-parse", data["branch"]) == data["commit"]
    assert len(server.requests) == 3
    _assert_untouched(project, head)
    assert git(project, "worktree", "list").count("\n") == 0  # the agent's worktree is gone
    assert "write_file" in result.err  # progress lines went to stderr

    shown = plait("show", data["run_id"], cwd=project)
    assert shown.code == 0
    for expected in ("write_file", "hello, ann!", "greet punctuates now", '+    return "hello, "'):
        assert expected in shown.out
    listed = plait("runs", "--json", cwd=project).json()
    assert [(r["run_id"], r["status"], r["model_calls"], r["tool_calls"]) for r in listed] == [
        (data["run_id"], "done", 3, 3)
    ]


def test_a_model_that_keeps_sending_malformed_calls_fails_the_run_cleanly(plait: Plait, project: Path) -> None:
    bad = {"tool_calls": [{"name": "write_file", "arguments": '{"path": "x.py", "content": '}]}
    with WireServer([bad, bad, bad]) as server:
        result = plait("run", "do it", "--single", "--model", f"openai-compatible:m@{server.openai_url}", cwd=project)
    assert result.code == 1
    assert "3 malformed replies in a row" in result.out and "format_errors" in result.err
    assert git(project, "status", "--porcelain") == ""


def test_a_rejected_key_is_one_line_and_exit_4(plait: Plait, project: Path) -> None:
    with WireServer([{"status": 401, "message": "invalid x-api-key"}]) as server:
        extra = {"ANTHROPIC_API_KEY": "wrong", "ANTHROPIC_BASE_URL": server.url}
        result = plait(
            "run", "do it", "--single", "--model", "anthropic:claude-sonnet-4-5", cwd=project, extra_env=extra
        )
    assert result.code == 4  # the provider refused every call: a model provider problem, as the README says
    assert "401" in result.out
    assert result.err.strip().splitlines()[-1].startswith("plait: error: anthropic rejected the API key (401)")


def test_a_missing_key_fails_before_anything_is_written(plait: Plait, project: Path) -> None:
    result = plait("run", "do it", "--single", "--model", "openai:gpt-5.1", cwd=project)
    assert result.code == 4
    assert result.err.strip().count("\n") == 0 and "OPENAI_API_KEY is not set" in result.err
    assert not (project / ".git" / "plait").exists()


@pytest.mark.parametrize(
    ("setup", "message"),
    [("none", "is not inside a git repository"), ("empty", "has no commits yet")],
)
def test_outside_a_usable_repository_plait_says_so_in_one_line(
    plait: Plait, tmp_path: Path, setup: str, message: str
) -> None:
    where = tmp_path / "somewhere"
    where.mkdir()
    if setup == "empty":
        git(where, "init", "-q")
    result = plait("run", "do it", "--single", "--model", "scripted:x.yaml", cwd=where)
    assert result.code == 3
    assert result.err.strip().count("\n") == 0 and message in result.err


def test_uncommitted_changes_are_refused_then_left_out_or_snapshotted(
    plait: Plait, project: Path, tmp_path: Path
) -> None:
    (project / "greet.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (project / "notes.txt").write_text("untracked\n")
    before = git(project, "status", "--porcelain")
    script = tmp_path / "look.yaml"
    script.write_text(
        "turns:\n"
        "  - tool_calls: [{name: read_file, arguments: {path: greet.py}}]\n"
        '  - expect: "{expected}"\n'
        "    tool_calls: [{name: finish, arguments: {summary: looked}}]\n"
    )

    refused = plait("run", "look", "--single", "--model", f"scripted:{script}", cwd=project)
    assert refused.code == 3 and "--include-uncommitted" in refused.err
    assert refused.err.strip().count("\n") == 0
    assert not (project / ".git" / "plait").exists()

    script.write_text(script.read_text().replace("{expected}", "hello "))
    from_head = plait("run", "look", "--single", "--model", f"scripted:{script}", "--yes", "--json", cwd=project)
    assert from_head.code == 0, from_head.err + from_head.out
    assert "uncommitted change(s)" in from_head.err

    script.write_text(script.read_text().replace("hello ", "hi "))
    snap = plait(
        "run", "look", "--single", "--model", f"scripted:{script}", "--include-uncommitted", "--json", cwd=project
    )
    assert snap.code == 0, snap.err + snap.out
    assert git(project, "status", "--porcelain") == before  # the user's changes are still there, untouched
    assert git(project, "rev-parse", "HEAD") != snap.json()["base_commit"]


def test_config_shows_values_and_sources_with_secrets_masked(plait: Plait, project: Path) -> None:
    (project / ".plait.toml").write_text("max_steps = 7\n")
    extra = {"PLAIT_OPENAI_API_KEY": "sk-proj-supersecretvalue9876"}
    shown = plait("config", "--json", cwd=project, extra_env=extra).json()
    assert shown["max_steps"]["value"] == "7" and "repo file" in shown["max_steps"]["source"]
    assert shown["openai_api_key"]["value"] == "****9876"
    table = plait("config", cwd=project, extra_env=extra)
    assert "supersecret" not in table.out and "max_steps" in table.out


def test_unknown_run_and_bad_config_are_usage_errors(plait: Plait, project: Path) -> None:
    (project / ".git" / "plait").mkdir()
    from plait.events import SQLiteEventStore

    SQLiteEventStore(project / ".git" / "plait" / "events.db").close()
    assert plait("show", "nope", cwd=project).code == 2
    (project / ".plait.toml").write_text("max_steps = 'x'\n")
    bad = plait("run", "x", cwd=project)
    assert bad.code == 2 and "max_steps" in bad.err
