"""Codex as a plait worker: `codex exec --json` headless in the task's worktree, its JSONL events read as they come.

    codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox PROMPT
    codex exec resume THREAD PROMPT ...          (a resumed attempt that had started)

Codex is given its own home (`CODEX_HOME`, in the worktree's `.plait-agent/`) with a config that points it at the
run's model through the Responses API (`wire_api = "responses"`): `openai:NAME` at OPENAI_BASE_URL or OpenAI,
`openai-compatible:NAME@URL` at URL. plait's sandbox confines it, so its own is turned off.

Its events become plait's: `thread.started` gives the session, `item.started`/`item.completed` of a
`command_execution`, `file_change` or `mcp_tool_call` a tool call and its result, `agent_message` the text of a
turn, `turn.completed` the turn's usage (one model turn in plait's log: Codex reports usage per turn, not per
call), `turn.failed` or `error` a failure.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from plait.agent.external._job import openai_cli_env
from plait.agent.external._process import Files
from plait.agent.external._resuming import ResumingCli
from plait.agent.external.command import brief_text
from plait.agent.loop import AgentResult
from plait.messages import ToolCall, Usage

__all__ = ["CodexWorker", "codex_env"]

NAME = "codex"
_TOOLS = {"command_execution": "command", "file_change": "changes", "mcp_tool_call": "arguments"}


def codex_env(model: str, environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """Codex's provider for plait's `model` spec, as variables: its base URL, model name and key."""
    return openai_cli_env("PLAIT_CODEX", model, environ)


def _config(env: dict[str, str]) -> str:
    return (
        f"model = {json.dumps(env.get('PLAIT_CODEX_MODEL', ''))}\n"
        'model_provider = "plait"\n'
        "[model_providers.plait]\n"
        'name = "plait"\n'
        f"base_url = {json.dumps(env.get('PLAIT_CODEX_URL', ''))}\n"
        'env_key = "OPENAI_API_KEY"\n'
        'wire_api = "responses"\n'
    )


class CodexWorker(ResumingCli):
    """One attempt of a task, run by the Codex CLI."""

    name = NAME
    label = "Codex"

    async def run(self, task: str) -> AgentResult:
        job = self.job
        files = Files(job.worktree)
        env = dict(job.env)
        try:
            home = files.dir / "codex-home"
            home.mkdir(exist_ok=True)
            (home / "config.toml").write_text(_config(env))
            prompt = files.write("prompt.md", brief_text(job, task))
            exports = {"OPENAI_API_KEY": env.get("OPENAI_API_KEY", "none"), "CODEX_HOME": str(home)}
            flags = "--json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox"
            run = f"{files.env_prefix(exports)}codex exec {flags}"
            text = f'"$(cat {shlex.quote(prompt)})"'
            result, why, tail = await self._attempt(files, run, text, lambda session: f"resume {shlex.quote(session)}")
        finally:
            files.remove()
        return self._verdict(result, why, tail)

    def _line(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        raw = event.get("item")
        item: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if kind == "thread.started":
            self._log.session(str(event.get("thread_id", "")))
        elif kind == "item.started" and item.get("type") in _TOOLS:
            self._log.called(_call(item))
        elif kind == "item.completed":
            self._item(item)
        elif kind == "turn.completed":
            self._turns += 1
            text, self._text = "\n\n".join(self._text), []
            self._log.turn(text, [], _usage(event.get("usage")), NAME, spec=self.job.model)
        elif kind == "turn.failed":
            error = event.get("error")
            self._failure = (
                str(error.get("message", "")) if isinstance(error, dict) else str(error or "the turn failed")
            )
        elif kind == "error":
            self._failure = str(event.get("message", "")) or "an error"

    def _item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "agent_message":
            self._last = str(item.get("text", "")).strip()
            self._text.append(self._last)
        elif kind in _TOOLS:
            call = _call(item)
            if call.id not in self._log.names:  # a file change is reported done only
                self._log.called(call)
            failed = item.get("status") == "failed" or item.get("exit_code") not in (None, 0)
            output = item.get("aggregated_output") if kind == "command_execution" else item.get("result")
            text = str(output) if output is not None else json.dumps(item.get(_TOOLS[str(kind)]), default=str)
            self._log.result(call.id, text, failed)


def _call(item: dict[str, Any]) -> ToolCall:
    kind = str(item.get("type"))
    name = str(item.get("tool") or kind) if kind == "mcp_tool_call" else kind
    value = item.get(_TOOLS[kind])
    arguments = value if isinstance(value, dict) else {_TOOLS[kind]: value}
    return ToolCall(id=str(item.get("id", "")), name=name, arguments=arguments)


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cached_tokens=int(raw.get("cached_input_tokens") or 0),
        cache_write_tokens=int(raw.get("cache_write_input_tokens") or 0),
    )
