"""What the Codex and OpenCode workers share: a CLI that prints JSON events, resumes its own session by id, and
ends with its last message or a failure it reported."""

from __future__ import annotations

from collections.abc import Callable

from plait.agent.external._events import Transcript, logged_session
from plait.agent.external._job import Job
from plait.agent.external._process import Files, error_tail, run_watched
from plait.agent.external.command import stop
from plait.agent.loop import AgentResult
from plait.workspace import CommandResult

__all__ = ["ResumingCli"]


class ResumingCli:
    """One attempt of a task by a CLI; a subclass names it (`name`, `label`) and reads its events (`_line`),
    counting turns in `_turns`, keeping its last message in `_last` and a failure it reported in `_failure`."""

    name = ""
    label = ""

    def __init__(self, job: Job) -> None:
        self.job = job
        self._log = Transcript(job, self.name)
        self._text: list[str] = []
        self._last = ""
        self._failure = ""
        self._turns = 0

    def _line(self, line: str) -> None:
        raise NotImplementedError

    async def _attempt(
        self, files: Files, run: str, text: str, resume: Callable[[str], str]
    ) -> tuple[CommandResult | None, str, str]:
        """Run `run text`, continuing the session the log names (`resume(session)` gives the words that do); when
        that session is gone (the CLI made no turn), log so and start afresh. Returns (result, why it was killed,
        the tail of its error output)."""
        job, log = self.job, self._log
        session = logged_session(job, self.name)
        command = f"{run} {resume(session)} {text}" if session else f"{run} {text}"
        result, why = await run_watched(job, f"{command} < /dev/null", files, self._line, log.spent)
        if session and result is not None and not result.timed_out and not self._turns:
            log.lost_session(session, self._failure or error_tail(files, result, 500))
            self._failure = ""
            result, why = await run_watched(job, f"{run} {text} < /dev/null", files, self._line, log.spent)
        return result, why, error_tail(files, result)

    def _verdict(self, result: CommandResult | None, why: str, tail: str) -> AgentResult:
        """How the attempt ended: its budget spent, past its wall time, failed, or finished with its last message."""
        log, label = self._log, self.label
        if result is None:
            return stop(log, "budget", why)
        if result.timed_out:
            return stop(log, "wall_time", f"{label} ran past {self.job.wall_s:.0f}s and was killed")
        if self._failure or result.exit_code != 0:
            return stop(log, "model_error", f"{label} failed: {self._failure or tail or f'exit {result.exit_code}'}")
        return stop(log, "finished", self._last or f"{label} finished")
