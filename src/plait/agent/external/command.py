"""The generic external agent: any command template that edits the worktree and exits.

    command:my-agent --task {prompt_file} --in {worktree}

`{prompt_file}` is a file holding the brief (with the system part and notes); `{worktree}` the task's worktree.
Its output is the transcript (logged as it comes, a line a `tool_result` of a `transcript` call); its exit code
says whether the task succeeded.
"""

from __future__ import annotations

import shlex

from plait.agent.context import NOTES_HEADER
from plait.agent.external._events import Transcript
from plait.agent.external._job import Job
from plait.agent.external._process import Files, error_tail, run_watched
from plait.agent.loop import AgentResult
from plait.events.types import StopReason
from plait.messages import ToolCall, Usage

__all__ = ["CommandWorker", "brief_text", "stop"]


class CommandWorker:
    """Runs the template once per attempt, through the task's runner."""

    name = "command"

    def __init__(self, job: Job, template: str) -> None:
        self.job, self.template = job, template

    async def run(self, task: str) -> AgentResult:
        job = self.job
        log = Transcript(job, self.name)
        files = Files(job.worktree)
        try:
            prompt = files.write("prompt.md", brief_text(job, task))
            command = self.template.replace("{prompt_file}", shlex.quote(f"{job.worktree}/{prompt}"))
            command = command.replace("{worktree}", shlex.quote(str(job.worktree)))
            call = ToolCall(id="command-1", name="command", arguments={"command": command})
            log.turn("", [call], Usage(), self.name, cost=0.0)
            lines: list[str] = []
            result, why = await run_watched(
                job, files.env_prefix(dict(job.env)) + command, files, lines.append, log.spent
            )
            transcript = "\n".join(lines)
            if result is None:
                log.result(call.id, transcript, True)
                return self._stop(log, "budget", why)
            tail = error_tail(files, result)
            log.result(call.id, "\n".join(p for p in (transcript, tail) if p), result.exit_code != 0)
        finally:
            files.remove()
        if result.timed_out:
            return self._stop(log, "wall_time", f"the command ran past {job.wall_s:.0f}s and was killed")
        if result.exit_code != 0:
            return self._stop(log, "model_error", f"the command exited with {result.exit_code}: {tail[-500:]}")
        last = transcript.strip().splitlines()[-1] if transcript.strip() else "the command finished"
        return self._stop(log, "finished", last)

    def _stop(self, log: Transcript, reason: StopReason, summary: str) -> AgentResult:
        return stop(log, reason, summary)


def stop(log: Transcript, reason: StopReason, summary: str) -> AgentResult:
    """Log how the agent ended, and say so as plait's own agent would."""
    log.stopped(reason, summary)
    return AgentResult(reason, summary, log.steps, log.usage, log.cost)


def brief_text(job: Job, task: str) -> str:
    """What the agent is given: plait's system part, the task's brief, then the notes addressed to the task."""
    notes = list(job.notes()) if job.notes is not None else []
    parts = [job.system.strip(), task.strip()]
    if notes:
        parts.append(f"{NOTES_HEADER}:\n\n" + "\n\n".join(notes))
    return "\n\n".join(p for p in parts if p) + "\n"
