"""The tools of the MCP servers the user configured, offered to an agent as `mcp__<server>__<tool>`.

    attempt starts ─► the log has this attempt's tool list? ─ yes ─► offer it; start no server yet
                                      │ no
                                      ▼
                      start each server in the agent's sandbox (`_mcp_pipe`), list its tools, log the list
    a call ─► arguments an object, within the cap ─► the policy (`sandbox.mcp` rules; none: denied) ─► the server
    attempt ends ─► every server's process tree is killed

A call and its result are the loop's ordinary `tool_called`/`tool_returned` events: a resumed agent reads them
back from the log, and a server is started again only when a call not in the log needs it.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ConfigDict

from plait._mcp_config import SERVER_NAME, McpServer
from plait.agent._mcp_json import RunServers, run_servers
from plait.agent._mcp_pipe import ServerFailed, ServerProcess
from plait.agent.arguments import ToolArgs
from plait.agent.loop import Agent, AgentResult
from plait.agent.toolset import Tool, ToolOutcome, Toolset
from plait.events.runlog import RunLog
from plait.events.types import Decision, McpToolsListed
from plait.messages import ToolCall, ToolSpec
from plait.redact import Redactor
from plait.settings import Settings
from plait.trust import trust_state
from plait.workspace.command import Shell
from plait.workspace.policy import Policy

if TYPE_CHECKING:
    import mcp_types

__all__ = ["McpAttempt", "McpTools", "mcp_tools", "serve"]

PREFIX = "mcp__"
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_NAME_LIMIT = 64
_DESCRIPTION_LIMIT = 2000
_SCHEMA_LIMIT = 16_384
_ARGUMENTS_LIMIT = 65_536
_TOOLS_PER_SERVER = 64
_START_S = 60.0


class _AnyArgs(ToolArgs):
    model_config = ConfigDict(extra="allow", strict=True)


class _Worker(Protocol):
    async def run(self, task: str) -> AgentResult: ...


def _spec(server: str, tool: mcp_types.Tool) -> ToolSpec | None:
    name = f"{PREFIX}{server}__{tool.name}"
    if not _NAME.match(tool.name) or len(name) > _NAME_LIMIT:
        return None
    about = " ".join((tool.description or tool.title or "").split())[:_DESCRIPTION_LIMIT]
    schema: dict[str, Any] = dict(tool.input_schema or {"type": "object"})
    if len(json.dumps(schema)) > _SCHEMA_LIMIT:
        schema, about = {"type": "object"}, about + " (its argument schema was too large to show)"
    return ToolSpec(name=name, description=f"[MCP server {server}] {about}", parameters=schema)


def _text(result: mcp_types.CallToolResult) -> str:
    import mcp_types  # the SDK's types: imported once a server answers, not with the run

    parts = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts) or "(no output)"


def _capped(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half:,} characters cut ...]\n{text[-half:]}"


@dataclass(frozen=True)
class McpAttempt:
    """One attempt of a task, as its MCP servers need to know it: the run's settings, repository, base commit and
    log, and where the attempt's agent works."""

    settings: Settings
    repo: Path
    commit: str
    log: RunLog
    task_id: str
    attempt: int
    runner: Shell
    worktree: Path


class McpTools:
    """The MCP servers of one attempt: `open` before the agent runs (`tools` then offers theirs), `close` after."""

    def __init__(
        self,
        servers: Mapping[str, McpServer],
        *,
        runner: Shell,
        worktree: Path,
        policy: Policy,
        log: RunLog,
        agent: str,
        attempt: int,
        output_limit: int = 16_000,
        call_timeout: float = 300.0,
    ) -> None:
        self.servers, self.runner, self.worktree = dict(servers), runner, worktree
        self.policy, self.log, self.agent, self.attempt = policy, log, agent, attempt
        self.output_limit, self.call_timeout = output_limit, call_timeout
        self.redact = Redactor()
        self.tools = Toolset()
        """The servers' tools, once `open`."""
        self._running: dict[str, ServerProcess] = {}

    def offer(self, specs: Sequence[ToolSpec]) -> Toolset:
        """The servers' tools of these specs; a call of another `mcp__` name is told which there are."""
        names = ", ".join(s.name for s in specs) or "none"

        def unknown(name: str, offered: tuple[str, ...]) -> str | None:
            if not name.startswith(PREFIX):
                return None
            return f"unknown MCP tool {name[:80]!r}: the MCP tools are {names}."

        return Toolset([Tool(s.name, _AnyArgs, self._execute, spec=s) for s in specs], refusals=(unknown,))

    async def open(self) -> None:
        """Offer the tools this attempt logged; else start the servers, list their tools and log the list."""
        for event in self.log.events(agent=self.agent, kinds=["mcp_tools"]):
            if isinstance(event, McpToolsListed) and event.attempt == self.attempt:
                self.tools = self.offer(list(event.tools))
                return
        specs: list[ToolSpec] = []
        failed: dict[str, str] = {}
        for name in self.servers:
            try:
                tools = await self._start(name)
            except ServerFailed as exc:
                failed[name] = str(exc)
                continue
            offered = [s for s in (_spec(name, t) for t in tools[:_TOOLS_PER_SERVER]) if s is not None]
            specs += offered
        self.tools = self.offer(specs)
        what = f"started {len(self._running)} MCP server(s) offering {len(specs)} tool(s)"
        why = "; ".join(failed.values())
        ids = {"run_id": self.log.run_id, "agent": self.agent, "attempt": self.attempt}
        self.log.append(McpToolsListed(**ids, decision=what, reason=why, tools=specs, failed=failed))

    async def close(self) -> None:
        """Stop every server this attempt started."""
        running, self._running = self._running, {}
        for server in running.values():
            await server.stop()

    async def _start(self, name: str) -> list[mcp_types.Tool]:
        server = ServerProcess(name, self.servers[name], self.runner, self.worktree)
        try:
            tools = await server.start(_START_S)
        except ServerFailed:
            await server.stop()
            raise
        self._running[name] = server
        return tools

    async def _execute(self, args: _AnyArgs, call: ToolCall) -> ToolOutcome:
        size = len(call.raw_arguments)
        if size > _ARGUMENTS_LIMIT:
            text = f"the arguments of {call.name} are {size:,} characters, over the limit of {_ARGUMENTS_LIMIT:,}"
            return ToolOutcome(text + ": send shorter ones.", format_error=True)
        decision = self.policy.check_mcp(call.name)
        self.log.append(
            Decision(
                run_id=self.log.run_id,
                agent=self.agent,
                topic="mcp_policy",
                decision=f"{decision.verdict} {call.name}",
                reason=decision.reason,
                data={"tool": call.name, "verdict": decision.verdict, "rule": decision.rule},
            )
        )
        if decision.verdict != "allow":
            text = (
                f"plait did not call {call.name}: {decision.reason or 'the policy forbids it'} (rule {decision.rule})"
            )
            return ToolOutcome(text + (f"; {decision.instead}." if decision.instead else "."), is_error=True)
        return await self._call(call.name, dict(call.arguments or {}))

    async def _call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        server, tool = name[len(PREFIX) :].split("__", 1)
        try:
            if server not in self._running:  # a resumed attempt starts a server only for a call the log lacks
                await self._start(server)
            result = await self._running[server].call(tool, arguments, self.call_timeout)
        except ServerFailed as exc:
            return ToolOutcome(str(exc), is_error=True)
        text = _capped(self.redact(_text(result)), self.output_limit)
        return ToolOutcome(text, is_error=result.is_error)


def mcp_tools(at: McpAttempt) -> McpTools | None:
    """The MCP servers of the attempt, not started yet; None when none is configured."""
    s = at.settings
    trusted = trust_state(at.repo) == "trusted"
    found: RunServers = run_servers(dict(s.mcp_servers), at.repo, at.commit, trusted=trusted)
    servers = {k: v for k, v in found.servers.items() if re.match(SERVER_NAME, k)}
    bad = [f"mcp_servers.{k}" for k in found.servers if k not in servers]
    if found.ignored or bad:
        why = found.why if found.ignored else "a server's name may hold only letters, digits, _ and -"
        ignored = [*found.ignored, *bad]
        event = Decision(
            run_id=at.log.run_id,
            agent=at.task_id,
            topic="mcp_ignored",
            decision=f"ignored MCP server(s) {', '.join(ignored)}",
            reason=why,
            data={"attempt": at.attempt, "ignored": ignored},
        )
        at.log.append(event)
    if not servers:
        return None
    return McpTools(
        servers,
        runner=at.runner,
        worktree=at.worktree,
        policy=Policy.from_settings(s.sandbox),
        log=at.log,
        agent=at.task_id,
        attempt=at.attempt,
        output_limit=s.output_limit,
        call_timeout=s.command_timeout,
    )


async def serve(at: McpAttempt, worker: _Worker, brief: str) -> AgentResult:
    """Run `worker` on `brief`; plait's own agent gets the run's MCP servers' tools, the servers started around it."""
    if not isinstance(worker, Agent):
        return await worker.run(brief)
    servers = await asyncio.to_thread(mcp_tools, at)  # its git read of `.mcp.json` holds up no other agent
    if servers is None:
        return await worker.run(brief)
    tools = worker.toolbox
    try:
        await servers.open()
        worker.toolbox = tools | servers.tools
        return await worker.run(brief)
    finally:
        await servers.close()
