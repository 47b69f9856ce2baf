"""External coding agents as plait workers: their own CLI, headless, in the task's worktree.

    Worker (protocol) ─┬─ plait's own tool loop (`plait.agent.loop.Agent`)
                       ├─ `CodexWorker`: `codex exec --json`
                       ├─ `OpenCodeWorker`: `opencode run --format json`
                       ├─ `CommandWorker`: any command template that edits the worktree and exits
                       └─ `ClaudeCodeWorker`: `claude -p --output-format stream-json`

An external worker runs through the task's `Shell` (the sandbox, its environment allow-list and limits),
its output is turned into plait events (`_events.Transcript`), and plait commits the worktree afterwards as it
does for its own agent. See docs/agents.md for what plait sees of such an agent and what a resume means.
"""

from __future__ import annotations

from dataclasses import replace

from plait.agent.external._job import BUILT_IN, Job, Worker, check_agent, with_network
from plait.agent.external.claude_code import ClaudeCodeWorker
from plait.agent.external.codex import CodexWorker
from plait.agent.external.command import CommandWorker
from plait.agent.external.opencode import OpenCodeWorker
from plait.agent.prompts import external_system

__all__ = [
    "BUILT_IN",
    "ClaudeCodeWorker",
    "CodexWorker",
    "CommandWorker",
    "Job",
    "OpenCodeWorker",
    "Worker",
    "check_agent",
    "make_worker",
    "with_network",
]


def make_worker(agent: str, job: Job) -> Worker:
    """The external worker `agent` names (`claude-code`, `codex`, `opencode`, `command:TEMPLATE`), set up for `job`."""
    kind = check_agent(agent)
    job = replace(job, system=external_system(job.system))  # its tools are its own, not plait's
    if kind == "claude-code":
        return ClaudeCodeWorker(job)
    if kind == "codex":
        return CodexWorker(job)
    if kind == "opencode":
        return OpenCodeWorker(job)
    return CommandWorker(job, agent.partition(":")[2])
