"""OpenCode as a plait worker: `opencode run --format json` headless in the task's worktree, its JSON events read
as they come.

    opencode run --format json -m plait/MODEL --title TASK PROMPT
    opencode run --format json -m plait/MODEL --title TASK --session SESSION PROMPT   (a resumed attempt)

OpenCode is given its own config and data directories (the XDG ones, in the worktree's `.plait-agent/`) with a
config whose one provider, `plait`, is OpenAI-compatible (`@ai-sdk/openai-compatible`, bundled with OpenCode) at the
run's model: `openai:NAME` at OPENAI_BASE_URL or OpenAI, `openai-compatible:NAME@URL` at URL. Every permission is
allowed: plait's sandbox confines it. `--title` spares the model call OpenCode would make to name the session.

Its events become plait's: any event's `sessionID` gives the session, `tool_use` a tool call and its result (reported
once done), `text` the text of a step, `step_finish` the step's usage (one model turn in plait's log), `error` a
failure.
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

__all__ = ["OpenCodeWorker", "opencode_env"]

NAME = "opencode"
_XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


def opencode_env(model: str, environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """OpenCode's provider for plait's `model` spec, as variables: its base URL, model name and key."""
    return openai_cli_env("PLAIT_OPENCODE", model, environ)


def _config(env: dict[str, str]) -> str:
    model = env.get("PLAIT_OPENCODE_MODEL", "")
    options = {"baseURL": env.get("PLAIT_OPENCODE_URL", ""), "apiKey": "{env:OPENAI_API_KEY}"}
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "plait", "options": options, "models": {model: {}}}
    allow = {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"}
    config = {
        "provider": {"plait": provider},
        "model": f"plait/{model}",
        "small_model": f"plait/{model}",
        "autoupdate": False,
        "share": "disabled",
        "permission": allow,
    }
    return json.dumps(config, indent=2) + "\n"


class OpenCodeWorker(ResumingCli):
    """One attempt of a task, run by the OpenCode CLI."""

    name = NAME
    label = "OpenCode"

    async def run(self, task: str) -> AgentResult:
        job = self.job
        files = Files(job.worktree)
        env = dict(job.env)
        try:
            home = files.dir / "opencode-home"
            home.mkdir(exist_ok=True)
            config = home / "opencode.json"
            config.write_text(_config(env))
            prompt = files.write("prompt.md", brief_text(job, task))
            exports = {name: str(home / name.lower()) for name in _XDG}
            exports |= {"OPENAI_API_KEY": env.get("OPENAI_API_KEY", "none"), "OPENCODE_CONFIG": str(config)}
            model = shlex.quote(f"plait/{env.get('PLAIT_OPENCODE_MODEL', '')}")
            title = shlex.quote(f"plait {job.agent_id}")
            run = f"{files.env_prefix(exports)}opencode run --format json -m {model} --title {title}"
            text = f'"$(cat {shlex.quote(prompt)})"'
            result, why, tail = await self._attempt(
                files, run, text, lambda session: f"--session {shlex.quote(session)}"
            )
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
        raw = event.get("part")
        part: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if event.get("sessionID"):
            self._log.session(str(event["sessionID"]))
        if kind == "text":
            text = str(part.get("text", "")).strip()
            if text:
                self._last = text
                self._text.append(text)
        elif kind == "tool_use":
            self._tool(part)
        elif kind == "step_finish":
            self._turns += 1
            text, self._text = "\n\n".join(self._text), []
            self._log.turn(text, [], _usage(part.get("tokens")), NAME, spec=self.job.model)
        elif kind == "error":
            self._failure = _error(event.get("error"))

    def _tool(self, part: dict[str, Any]) -> None:
        raw = part.get("state")
        state: dict[str, Any] = raw if isinstance(raw, dict) else {}
        given = state.get("input")
        call = ToolCall(
            id=str(part.get("callID") or part.get("id") or ""),
            name=str(part.get("tool") or "tool"),
            arguments=given if isinstance(given, dict) else {"input": given},
        )
        if call.id not in self._log.names:
            self._log.called(call)
        failed = state.get("status") == "error"
        output = state.get("error") if failed else state.get("output")
        self._log.result(call.id, str(output) if output is not None else "", failed)


def _error(raw: object) -> str:
    if not isinstance(raw, dict):
        return str(raw or "an error")
    data = raw.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    return str(message or raw.get("name") or "an error")


def _usage(raw: object) -> Usage:
    """OpenCode's step tokens as plait's usage: its `input` leaves out the cached tokens, plait's counts them."""
    if not isinstance(raw, dict):
        return Usage()
    cache = raw.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    read, written = int(cache.get("read") or 0), int(cache.get("write") or 0)
    return Usage(
        input_tokens=int(raw.get("input") or 0) + read + written,
        output_tokens=int(raw.get("output") or 0) + int(raw.get("reasoning") or 0),
        cached_tokens=read,
        cache_write_tokens=written,
    )
