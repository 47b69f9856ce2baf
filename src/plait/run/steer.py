"""The user's word to one agent of a run in progress, read from the run's log: a message, a pause, a stop.

`plait agent RUN TASK --say/--pause/--resume/--stop` appends a `UserSteered` event, from any process on any
machine that shares the store. The run's own process reads the log before each live model call of the agent:

    say     ─► the agent's next request carries it as a note (logged with the step, so a resumed agent
               is told it again, and a message not yet delivered is delivered after a crash)
    pause   ─► the step in flight ends, then the agent waits before its next model call until `resume`
    stop    ─► the attempt ends (`stopped_by_user`); its task is dropped, or with `retry` tried again
               from its work

A stop wins when it is logged before the attempt's work is committed (the `commit` event that ends the attempt):
the agent reads it before its next live call, and the run reads it again as it hands the work to the merge, so that
a stop given while the call that finishes the task is in flight is not missed; after the commit it is too late,
the work is merged. The log alone decides, so a resumed run decides as the killed one would have. A stop that drops
the task holds for every later attempt of it (one that failed otherwise is not tried again); a stop to try again
ends the attempt in flight only.

Paused time still counts against the task's wall-time limit.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal

from plait.agent.journal import agent_events
from plait.events.runlog import RunLog
from plait.events.types import Committed, Decision, Event, NotesDelivered, TaskStarted, UserSteered

__all__ = ["SAID", "Action", "Steering", "notes_from", "said", "steer", "told"]

SAID = "The user says"
"""How a user's message starts among the notes an agent is given."""

_POLL_S = 0.5

Action = Literal["say", "pause", "resume", "stop"]

_TOLD = {
    "say": "{task} reads it at its next model call",
    "pause": "{task} pauses before its next model call; `plait agent {run} {task} --resume` lets it go on",
    "resume": "{task} goes on",
    "stop": "{task} stops after the step in flight; the task is dropped, unless its work was committed already",
    "retry": "{task} stops after the step in flight; the task is tried again from its work, unless it was committed",
}


def steer(log: RunLog, task: str, action: Action, *, text: str = "", retry: bool = False) -> str:
    """Log the user's word to `task`'s agent (the event `plait agent` and the live view write); what follows, said."""
    log.append(UserSteered(run_id=log.run_id, agent=task, action=action, text=text, retry=retry))
    return told(action, task, log.run_id, retry=retry)


def told(action: Action, task: str, run_id: str, *, retry: bool = False) -> str:
    """What steering `task` this way does, in a line."""
    return _TOLD["retry" if retry and action == "stop" else action].format(task=task, run=run_id)


def said(text: str) -> str:
    """The note a user's message becomes."""
    return f"{SAID}: {text}"


def notes_from(*sources: Callable[[], Sequence[str]] | None) -> Callable[[], Sequence[str]]:
    """One note source made of several (the board's, the user's)."""
    found = [s for s in sources if s is not None]
    return lambda: [note for source in found for note in source()]


class Steering:
    """What the user asked of one task's agent, as the log has it.

    The task's events come from the run's read of its agents' past (`plait.agent.journal.agent_events`: the log
    read and decoded once, then only what was appended since), and are looked at from where the last look
    stopped: a live call of a long run's agent reads a few new events, not the run's log again. The notes
    delivered (the agent's decisions, many) are looked at only once the user has said something.
    """

    def __init__(self, log: RunLog, task_id: str, *, poll_s: float = _POLL_S) -> None:
        self.log, self.task_id, self.poll_s = log, task_id, poll_s
        self.stopped: UserSteered | None = None
        """The stop of the attempt in flight, as `hold` last saw it."""
        self._last = 0
        self._steers: list[UserSteered] = []
        self._started = 0
        self._delivered: Counter[str] = Counter()
        self._delivered_last = 0

    @property
    def retry(self) -> bool:
        """Whether the user, stopping the attempt, asked for the task to be tried again."""
        return self.stopped is not None and self.stopped.retry

    def _fresh(self, after: int) -> tuple[list[Event], bool]:
        """The task's events after sequence number `after`, and whether they are all there is (a store that does not
        number its events is read in full)."""
        events = agent_events(self.log, self.task_id)
        if events and not events[-1].seq > 0:
            return events, True
        return events[bisect.bisect_right(events, after, key=lambda e: e.seq) :], False

    def _read(self) -> None:
        """Take in the task's steering and attempt starts logged since the last read."""
        fresh, everything = self._fresh(self._last)
        if everything:
            self._steers, self._started = [], 0
        for event in fresh:
            if isinstance(event, UserSteered):
                self._steers.append(event)
            elif isinstance(event, TaskStarted):
                self._started = event.seq
        self._last = fresh[-1].seq if fresh else self._last

    def _read_delivered(self) -> None:
        """Take in the notes delivered to the task's agents since the last read (only once the user has said
        something: an agent's decisions are many)."""
        fresh, everything = self._fresh(self._delivered_last)
        if everything:
            self._delivered = Counter()
        for event in fresh:
            if isinstance(event, NotesDelivered):
                self._delivered.update(event.notes)
        self._delivered_last = fresh[-1].seq if fresh else self._delivered_last

    def notes(self) -> list[str]:
        """The user's messages not yet delivered to an attempt of this task, oldest first."""
        self._read()
        messages = [said(e.text) for e in self._steers if e.action == "say"]
        if not messages:
            return []
        self._read_delivered()
        delivered = Counter(self._delivered)
        fresh = []
        for message in messages:
            if delivered[message] > 0:
                delivered[message] -= 1
            else:
                fresh.append(message)
        return fresh

    async def hold(self) -> str | None:
        """Wait while the task is paused; the reason to stop, when the user stopped its attempt in flight."""
        told = False
        while True:
            self._read()
            if (why := self._stop()) is not None:
                return why
            toggles = [e.action for e in self._steers if e.action in ("pause", "resume")]
            if not toggles or toggles[-1] != "pause":
                return None
            if not told:
                self.log.append(
                    Decision(
                        run_id=self.log.run_id,
                        agent=self.task_id,
                        topic="steer",
                        decision="paused before its next model call",
                    )
                )
                told = True
            await asyncio.sleep(self.poll_s)

    def stopped_before(self, commit: str) -> str | None:
        """The reason to stop, when the user stopped the attempt before its work was committed as `commit` (read
        as the work is handed to the merge: the stop the agent could not read after its last model call)."""
        self._read()
        until = next((e.seq for e in reversed(self._commits()) if e.sha == commit), 0) if commit else 0
        return self._stop(until)

    def _commits(self) -> list[Committed]:
        return [e for e in self.log.events(agent=self.task_id, kinds=["commit"]) if isinstance(e, Committed)]

    def _stop(self, until: int = 0) -> str | None:
        """The reason to stop the attempt in flight, as read last (with `until`, by a stop logged before it): a stop
        that drops the task, whenever it came, or a stop to try again given since the attempt started."""
        self.stopped = next(
            (
                e
                for e in self._steers
                if e.action == "stop" and (not e.retry or e.seq > self._started) and (not until or e.seq < until)
            ),
            None,
        )
        if self.stopped is None:
            return None
        return "stopped by the user, to be tried again from its work" if self.retry else "dropped by the user"
