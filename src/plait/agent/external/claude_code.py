"""Claude Code as a plait worker: `claude -p` headless in the task's worktree, its stream-json read as it comes.

    claude -p PROMPT --output-format stream-json --verbose --permission-mode bypassPermissions
           --max-turns N [--model M] --append-system-prompt BRIEF [--resume SESSION]

Its events become plait's (see `_events`): `system/init` gives the session id, each `assistant` message a model
turn with its tool uses, each `user` message's `tool_result` a tool result, `result` the agent's end with its
total cost. A resumed attempt that had started continues the same session with `--resume`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from plait.agent.external._events import Transcript, logged_session
from plait.agent.external._job import Job
from plait.agent.external._process import Files, error_tail, run_watched
from plait.agent.external.command import brief_text, stop
from plait.agent.loop import AgentResult
from plait.messages import ToolCall, Usage

__all__ = ["ClaudeCodeWorker", "claude_env"]

NAME = "claude-code"
_CHANGES_FILES = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"})
_ENV = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def claude_env(environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """What Claude Code is given of plait's environment: its endpoint and key, and IS_SANDBOX=1 as root."""
    environ = dict(os.environ) if environ is None else environ
    env = [(k, environ[k]) for k in _ENV if environ.get(k)]
    env += [("DISABLE_AUTOUPDATER", "1"), ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")]
    if os.geteuid() == 0:  # bypassPermissions is refused to root outside a sandbox it is told of
        env.append(("IS_SANDBOX", "1"))
    return env


class ClaudeCodeWorker:
    """One attempt of a task, run by the Claude Code CLI."""

    name = NAME

    def __init__(self, job: Job) -> None:
        self.job = job
        self._log = Transcript(job, NAME)
        self._ended: dict[str, Any] = {}
        self._seen: set[str] = set()
        self._held: list[tuple[str, str, bool]] = []
        """Tool results read but not yet logged: a checkpoint of what they changed is logged with them."""

    async def run(self, task: str) -> AgentResult:
        job, log = self.job, self._log
        files = Files(job.worktree)
        try:
            prompt = files.write("prompt.md", _user(job, task))
            system = files.write("system.md", job.system)
            argv = f'claude -p "$(cat {prompt})" --append-system-prompt "$(cat {system})"'
            argv += " --output-format stream-json --verbose --permission-mode bypassPermissions"
            argv += f" --max-turns {job.max_turns}"
            if job.model.startswith("anthropic:"):
                argv += f" --model {job.model.partition(':')[2]}"
            command = files.env_prefix(dict(job.env)) + argv
            session = logged_session(job, NAME)
            result, why = await run_watched(
                job, command + (f" --resume {session}" if session else ""), files, self._line, log.spent, self._saved
            )
            if session and result is not None and not result.timed_out and not log.steps and self._failed():
                # its session is gone (it lives in the agent's home, which a sandbox makes anew): start afresh
                log.lost_session(session, str(self._ended.get("result", "")) or error_tail(files, result, 500))
                self._ended = {}
                result, why = await run_watched(job, command, files, self._line, log.spent, self._saved)
            tail = error_tail(files, result)
        finally:
            files.remove()
        if result is None:
            return stop(log, "budget", why)
        ended = self._ended
        if result.timed_out:
            return stop(log, "wall_time", f"Claude Code ran past {job.wall_s:.0f}s and was killed")
        if not ended:
            return stop(log, "model_error", f"Claude Code exited with {result.exit_code} before its result: {tail}")
        log.settle(float(ended.get("total_cost_usd") or 0.0))
        text = str(ended.get("result", "")).strip()
        subtype = str(ended.get("subtype", ""))
        if subtype == "error_max_turns":
            return stop(log, "step_limit", f"Claude Code reached its limit of {job.max_turns} turns")
        if ended.get("is_error") or subtype != "success" or result.exit_code != 0:
            return stop(log, "model_error", f"Claude Code ended with {subtype or 'an error'}: {text or tail}")
        return stop(log, "finished", text or "Claude Code finished")

    async def _saved(self) -> None:
        """Log the results read so far, the last with a checkpoint of the worktree when a tool may have changed it."""
        held, self._held = self._held, []
        if not held:
            return
        changing = any(self._log.names.get(call_id) in _CHANGES_FILES for call_id, _, _ in held)
        saved = (await self.job.checkpoint() or "") if changing and self.job.checkpoint is not None else ""
        for i, (call_id, output, is_error) in enumerate(held):
            self._log.result(call_id, output, is_error, saved if i == len(held) - 1 else "")

    def _failed(self) -> bool:
        return not self._ended or bool(self._ended.get("is_error"))

    def _line(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return  # not an event: a stray line of output
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self._log.session(str(event.get("session_id", "")), model=str(event.get("model", "")))
        elif kind == "assistant":
            self._assistant(event.get("message") or {})
        elif kind == "user":
            for block in _blocks(event.get("message") or {}):
                if block.get("type") == "tool_result":
                    self._held.append(
                        (str(block.get("tool_use_id", "")), _text(block.get("content")), bool(block.get("is_error")))
                    )
        elif kind == "result":
            self._ended = event
            self._log.session(str(event.get("session_id", "")))

    def _assistant(self, message: dict[str, Any]) -> None:
        blocks = _blocks(message)
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        calls = [
            ToolCall(id=str(b.get("id", "")), name=str(b.get("name", "")), arguments=b.get("input") or {})
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        # one message may come as several events, one a content block, each with the message's usage: count it once
        first = str(message.get("id", "")) not in self._seen
        self._seen.add(str(message.get("id", "")))
        self._log.turn(text, calls, _usage(message.get("usage")) if first else Usage(), str(message.get("model", "")))


def _user(job: Job, task: str) -> str:
    """The prompt: the task's brief and the notes addressed to it (the system part goes with the system prompt)."""
    return brief_text(Job(**{**job.__dict__, "system": ""}), task)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    cached, written = int(raw.get("cache_read_input_tokens") or 0), int(raw.get("cache_creation_input_tokens") or 0)
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0) + cached + written,  # plait's input counts the cached part
        output_tokens=int(raw.get("output_tokens") or 0),
        cached_tokens=cached,
        cache_write_tokens=written,
    )
