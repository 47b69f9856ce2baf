"""A scripted agent tries the escapes through its tools in a real worktree: each is contained, each denial logged."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from sandbox_box import SSH_MARKER, MakeBox, layer_params

from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events.runlog import RunLog
from plait.events.types import PolicyDecided, ToolReturned
from plait.models import PriceTable, ScriptedModel


def call(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run", "arguments": {"command": command}}]}


@pytest.mark.parametrize("layer", [p for p in layer_params() if p.values[0] != "none"])
def test_a_scripted_agent_is_contained_and_every_denial_is_logged(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    common, outside = box.repo.common_dir, box.outside
    up = os.path.relpath(outside, box.worktree)
    escapes = [
        "echo pwned > /etc/plait-pwned",  # the policy sees this one
        f't={outside}; echo pwned > "$t/new.txt"',  # the OS layer stops these
        f'p={up}; echo pwned >> "$p/victim.txt"',
        f"ln -s {outside} link; echo pwned > link/new.txt",
        f'g={common}; echo "touch /tmp/PWNED" > "$g/hooks/pre-commit"',
        "git config --local core.hooksPath /tmp",
        "git commit -am sneaky",
        "curl -s https://example.com",
        "cat ~/.ssh/config",
    ]
    turns = [call(c) for c in escapes]
    turns.append({"tool_calls": [{"name": "read_file", "arguments": {"path": f"{box.home}/.ssh/config"}}]})
    turns.append(call(f"{sys.executable} -m pytest -q test_calc.py"))
    turns.append({"expect": "1 passed", "tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]})
    model = ScriptedModel(turns)
    agent = Agent(
        log=RunLog(box.store, "run1"),
        agent_id="t0",
        model=model,
        toolbox=Toolbox(box.worktree, box.runner, command_timeout=60),
        prices=PriceTable(),
        system="You are a test agent.",
    )
    result = asyncio.run(agent.run("try to escape"))

    model.assert_complete()
    assert result.ok
    assert (outside / "victim.txt").read_text() == "original\n" and not (outside / "new.txt").exists()
    assert not (common / "hooks" / "pre-commit").exists() and not Path("/etc/plait-pwned").exists()
    assert "hooksPath" not in (common / "config").read_text()
    outputs = [e.output for e in box.store.events("run1") if isinstance(e, ToolReturned)]
    assert all(SSH_MARKER not in o for o in outputs)
    decisions = [e for e in box.store.events("run1") if isinstance(e, PolicyDecided)]
    denied_rules = {d.rule for d in decisions if d.verdict == "deny"}
    assert {"worktree-only", "git-state", "network-tool"} <= denied_rules
    assert any(rule.startswith("sandbox:") for rule in denied_rules)  # refusals by the OS layer, seen in output
    assert sum(d.action == "command" and d.verdict == "allow" for d in decisions) >= 6
