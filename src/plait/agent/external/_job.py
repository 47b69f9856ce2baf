"""What an external worker is given: the task's identity in the log, its worktree and runner, its limits."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from plait.agent.loop import AgentResult, Checkpoint, NoteSource, Spending
from plait.errors import UsageError
from plait.events.runlog import RunLog
from plait.models.pricing import PriceTable
from plait.workspace import Shell

if TYPE_CHECKING:
    from plait.settings import Settings

__all__ = ["BUILT_IN", "Job", "Worker", "check_agent", "openai_cli_env", "with_network"]

BUILT_IN = "plait"
"""The agent setting's value for plait's own tool loop."""

_KINDS = ("claude-code", "codex", "opencode", "command")


class Worker(Protocol):
    """Works on a brief in its worktree until done; plait's `Agent` is one, an external CLI another."""

    async def run(self, task: str) -> AgentResult: ...


@dataclass
class Job:
    """One attempt of one task, as an external worker runs it."""

    log: RunLog
    agent_id: str
    attempt: int
    runner: Shell
    worktree: Path
    system: str
    """plait's part of the system prompt: the run's shared prefix and the task's brief."""
    model: str = ""
    """plait's model spec; `anthropic:NAME` is passed on to Claude Code as its model."""
    max_turns: int = 60
    wall_s: float = 24 * 3600.0
    output_limit: int = 16_000
    budget: Spending | None = None
    prices: PriceTable | None = None
    notes: NoteSource | None = None
    checkpoint: Checkpoint | None = None
    """Saves the worktree as it is (a resumed attempt starts from the last one saved)."""
    env: Sequence[tuple[str, str]] = ()
    """Variables the agent's CLI is given, such as its API endpoint and key (the sandbox would scrub a key)."""


def check_agent(agent: str) -> str:
    """The kind of external agent `agent` names; a `UsageError` for one plait does not know."""
    kind = agent.partition(":")[0]
    if kind not in _KINDS:
        known = ", ".join([BUILT_IN, "claude-code", "codex", "opencode", "command:TEMPLATE"])
        raise UsageError(f"unknown agent {agent!r}: use one of {known}")
    if kind == "command" and not agent.partition(":")[2].strip():
        raise UsageError("the command agent needs a template, such as 'command:my-agent --prompt {prompt_file}'")
    return kind


def with_network(settings: Settings) -> tuple[Settings, str]:
    """The settings for a run whose agent is external: the sandbox lets commands reach the network (the agent's
    CLI talks to its API; the sandbox cannot open one host only), and a note saying so ('' when unchanged)."""
    if settings.agent == BUILT_IN:
        return settings, ""
    check_agent(settings.agent)
    if settings.sandbox.network is True:
        return settings, ""
    sandbox = settings.sandbox.model_copy(update={"network": True})
    note = f"the {settings.agent.partition(':')[0]} agent needs its API: the agents' commands may reach the network"
    return settings.model_copy(update={"sandbox": sandbox}), note


def openai_cli_env(prefix: str, model: str, environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """An OpenAI-wire CLI's provider for plait's `model` spec, as variables: `PREFIX_URL`, `PREFIX_MODEL` and the key.

    An `openai-compatible:NAME@URL` spec names its server; any other is sent to OPENAI_BASE_URL or OpenAI's API.
    """
    environ = dict(os.environ) if environ is None else environ
    kind, _, name = model.partition(":")
    url = environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    if kind == "openai-compatible" and "@" in name:
        name, _, url = name.partition("@")
    return [
        (f"{prefix}_URL", url),
        (f"{prefix}_MODEL", name),
        ("OPENAI_API_KEY", environ.get("OPENAI_API_KEY", "none")),
    ]
