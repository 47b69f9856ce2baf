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

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ConfigDict

from plait._mcp_config import SERVER_NAME, McpServer
from plait.agent._mcp_json import RunServers, run_servers
from plait.agent._mcp_pipe import ServerFailed, ServerProcess
from plait.agent._tool_args import ToolArgs
from plait.agent.loop import Agent, AgentResult, ToolSet
from plait.agent.tools import Toolbox, ToolOutcome, parse_arguments
from plait.events.store import EventStore
from plait.events.types import Decision
from plait.messages import ToolCall, ToolSpec
from plait.redact import Redactor
from plait.trust import trust_state
from plait.workspace.command import Shell
from plait.workspace.policy import Policy

if TYPE_CHECKING:
    import mcp_types

    from plait.run.parallel import TaskAttempts

__all__ = ["McpTools", "serve", "with_mcp"]

PREFIX = "mcp__"
TOPIC = "mcp"
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


class McpTools:
    """`inner`'s tools plus the servers' (before `finish`); `open` before the agent runs, `close` after."""

    def __init__(
        self,
        inner: ToolSet,
        servers: Mapping[str, McpServer],
        *,
        runner: Shell,
        worktree: Path,
        policy: Policy,
        store: EventStore,
        run_id: str,
        agent: str,
        attempt: int,
        output_limit: int = 16_000,
        call_timeout: float = 300.0,
    ) -> None:
        self.inner, self.servers, self.runner, self.worktree = inner, dict(servers), runner, worktree
        self.policy, self.store, self.run_id, self.agent, self.attempt = policy, store, run_id, agent, attempt
        self.output_limit, self.call_timeout = output_limit, call_timeout
        self.redact = Redactor()
        self._specs: tuple[ToolSpec, ...] = ()
        self._running: dict[str, ServerProcess] = {}

    def specs(self) -> tuple[ToolSpec, ...]:
        inner = self.inner.specs()
        return (
            tuple(s for s in inner if s.name != "finish") + self._specs + tuple(s for s in inner if s.name == "finish")
        )

    async def open(self) -> None:
        """Offer the tools this attempt logged; else start the servers, list their tools and log the list."""
        for event in self.store.events(self.run_id, agent=self.agent, kinds=["decision"]):
            if isinstance(event, Decision) and event.topic == TOPIC and event.data.get("attempt") == self.attempt:
                self._specs = tuple(ToolSpec.model_validate(s) for s in event.data["tools"])
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
        self._specs = tuple(specs)
        data = {"attempt": self.attempt, "tools": [s.model_dump(mode="json") for s in specs], "failed": failed}
        what = f"started {len(self._running)} MCP server(s) offering {len(specs)} tool(s)"
        why = "; ".join(failed.values())
        self.store.append(
            Decision(run_id=self.run_id, agent=self.agent, topic=TOPIC, decision=what, reason=why, data=data)
        )

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

    async def execute(self, call: ToolCall) -> ToolOutcome:
        if not call.name.startswith(PREFIX):
            return await self.inner.execute(call)
        if call.name not in {s.name for s in self._specs}:
            names = ", ".join(s.name for s in self._specs) or "none"
            return ToolOutcome(f"unknown MCP tool {call.name[:80]!r}: the MCP tools are {names}.", format_error=True)
        args = parse_arguments(call, _AnyArgs)
        if isinstance(args, ToolOutcome):
            return args
        size = len(call.raw_arguments)
        if size > _ARGUMENTS_LIMIT:
            text = f"the arguments of {call.name} are {size:,} characters, over the limit of {_ARGUMENTS_LIMIT:,}"
            return ToolOutcome(text + ": send shorter ones.", format_error=True)
        decision = self.policy.check_mcp(call.name)
        self.store.append(
            Decision(
                run_id=self.run_id,
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


def with_mcp(
    attempts: TaskAttempts, task_id: str, attempt: int, runner: Shell, worktree: Path, inner: ToolSet
) -> ToolSet:
    """`inner` with the run's MCP servers' tools, or `inner` itself when none is configured."""
    ctx = attempts.ctx
    s = ctx.settings
    trusted = trust_state(ctx.repo.root) == "trusted"
    found: RunServers = run_servers(dict(s.mcp_servers), ctx.repo.root, ctx.base.commit, trusted=trusted)
    servers = {k: v for k, v in found.servers.items() if re.match(SERVER_NAME, k)}
    bad = [f"mcp_servers.{k}" for k in found.servers if k not in servers]
    if found.ignored or bad:
        why = found.why if found.ignored else "a server's name may hold only letters, digits, _ and -"
        ignored = [*found.ignored, *bad]
        event = Decision(
            run_id=ctx.log.run_id,
            agent=task_id,
            topic="mcp_ignored",
            decision=f"ignored MCP server(s) {', '.join(ignored)}",
            reason=why,
            data={"attempt": attempt, "ignored": ignored},
        )
        ctx.log.append(event)
    if not servers:
        return inner
    return McpTools(
        inner,
        servers,
        runner=runner,
        worktree=worktree,
        policy=Policy.from_settings(s.sandbox),
        store=ctx.log.store,
        run_id=ctx.log.run_id,
        agent=task_id,
        attempt=attempt,
        output_limit=s.output_limit,
        call_timeout=s.command_timeout,
    )


async def serve(attempts: TaskAttempts, task_id: str, attempt: int, worker: _Worker, brief: str) -> AgentResult:
    """Run `worker` on `brief`; plait's own agent gets the run's MCP servers' tools, the servers started around it."""
    tools = getattr(worker, "toolbox", None)
    box = tools
    while box is not None and not isinstance(box, Toolbox):
        box = getattr(box, "inner", None)
    if not isinstance(worker, Agent) or tools is None or box is None:
        return await worker.run(brief)
    worker.toolbox = with_mcp(attempts, task_id, attempt, box.runner, box.root, tools)
    if not isinstance(worker.toolbox, McpTools):
        return await worker.run(brief)
    try:
        await worker.toolbox.open()
        return await worker.run(brief)
    finally:
        await worker.toolbox.close()
