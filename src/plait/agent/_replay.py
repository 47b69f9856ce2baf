"""Replay of an interrupted attempt: what its earlier process logged is read back, never done again.

Tool calls are known by (step, call id). One reply may carry two calls under the same id (a provider that
numbers calls per message, a model that repeats one); their results are handed back in the order they were
logged, one per call, so that each call of the reply gets its own result again.
"""

from __future__ import annotations

from collections import Counter

from plait.agent.journal import agent_events
from plait.agent.toolset import ToolOutcome
from plait.events.runlog import RunLog
from plait.events.types import (
    AgentStopped,
    ContextCompacted,
    ModelCallFinished,
    NotesDelivered,
    PromptGiven,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.messages import ToolCall

__all__ = ["FINISHING", "Called", "AttemptRecord", "Results", "last_checkpoint", "replayed"]

Key = tuple[int, str]
"""(step, call id) of a tool call."""

FINISHING = frozenset({"finish", "answer"})
"""Tools whose successful call ends an agent's task (`finish`) or its turn (`answer`)."""


class Results:
    """The logged results of an attempt's tool calls; `get` hands out the next one not handed out yet."""

    def __init__(self) -> None:
        self._logged: dict[Key, list[ToolReturned]] = {}
        self.taken: Counter[Key] = Counter()

    def add(self, event: ToolReturned) -> None:
        self._logged.setdefault((event.step, event.call_id), []).append(event)

    def get(self, key: Key) -> ToolReturned | None:
        """The result of the next call under `key`, as logged; None when every one logged was handed out."""
        logged = self._logged.get(key, [])
        if self.taken[key] >= len(logged):
            return None
        self.taken[key] += 1
        return logged[self.taken[key] - 1]

    def has(self, key: Key) -> bool:
        """Whether `get(key)` would hand out a logged result."""
        return self.taken[key] < len(self._logged.get(key, ()))

    def values(self) -> list[ToolReturned]:
        return [event for events in self._logged.values() for event in events]


class Called:
    """Tool calls logged as started: one in flight at a crash runs again, but is not logged again.

    `key in called` asks about the next call under `key` that runs live (the calls before it under the same
    key were read back from `results`, or asked about already), so it is asked once per such call.
    """

    def __init__(self, results: Results) -> None:
        self._results = results
        self._logged: Counter[Key] = Counter()
        self._asked: Counter[Key] = Counter()

    def add(self, key: Key) -> None:
        self._logged[key] += 1

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple):
            return False
        index = self._results.taken[key] + self._asked[key]
        self._asked[key] += 1
        return index < self._logged[key]


class AttemptRecord:
    """What an earlier process of this same attempt already logged: replayed, never done again.

    Built in one pass over the agent's events: its answered model calls, tool calls and results, notes,
    compactions, and whether it was prompted and stopped.
    """

    def __init__(self, log: RunLog, agent: str, attempt: int) -> None:
        self.answers: dict[int, ModelCallFinished] = {}
        """Answered model calls of the attempt by number."""
        self.results = Results()
        self.called = Called(self.results)
        self.notes: dict[int, list[str]] = {}
        self.compactions: set[int] = set()
        """Steps before which the conversation was compacted (and the compaction logged)."""
        self.prompted = False
        self.stopped = False
        current = 1
        for event in agent_events(log, agent):
            if isinstance(event, TaskStarted):
                current = event.attempt
            elif isinstance(event, AgentStopped) and current == attempt and event.reason != "interrupted":
                self.stopped = True
            elif isinstance(event, PromptGiven) and event.attempt == attempt:
                self.prompted = True
            elif isinstance(event, ToolCalled) and event.attempt == attempt:
                self.called.add((event.step, event.call.id))
            elif isinstance(event, ToolReturned) and event.attempt == attempt:
                self.results.add(event)
            elif isinstance(event, ModelCallFinished) and event.attempt == attempt:
                self.answers[event.call] = event
            elif isinstance(event, NotesDelivered) and event.attempt == attempt:
                self.notes[event.step] = list(event.notes)
            elif isinstance(event, ContextCompacted) and event.attempt == attempt:
                self.compactions.add(event.step)

    @property
    def last_checkpoint(self) -> str:
        saved = [r.checkpoint for r in sorted(self.results.values(), key=lambda r: r.seq) if r.checkpoint]
        return saved[-1] if saved else ""


def last_checkpoint(log: RunLog, agent: str, attempt: int) -> str:
    """`AttemptRecord(...).last_checkpoint` without building the rest of the record: the commit of the attempt's last
    logged tool result that saved one, "" when none did."""
    events = agent_events(log, agent)
    return next(
        (
            e.checkpoint
            for e in reversed(events)
            if isinstance(e, ToolReturned) and e.attempt == attempt and e.checkpoint
        ),
        "",
    )


def replayed(recorded: ToolReturned, call: ToolCall) -> ToolOutcome:
    """The outcome of a tool call as the log has it (`is_error` set for a malformed call too); a finishing tool
    is recognised by its name."""
    finished = call.name in FINISHING and not recorded.is_error
    args = call.arguments or {}
    summary = str(args.get("summary", args.get("answer", ""))) if finished else ""
    return ToolOutcome(
        output=recorded.output,
        is_error=recorded.is_error,
        format_error=recorded.format_error,
        finished=finished,
        summary=summary,
    )
