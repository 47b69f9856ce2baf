"""Replay of an interrupted attempt: what its earlier process logged is read back, never done again."""

from __future__ import annotations

from plait.agent.tools import ToolOutcome
from plait.events.store import EventStore
from plait.events.types import AgentStopped, Decision, PromptGiven, TaskStarted, ToolCalled, ToolReturned
from plait.models.base import ToolCall

__all__ = ["FINISHING", "Recorded", "replayed"]

FINISHING = frozenset({"finish", "answer"})
"""Tools whose successful call ends an agent's task (`finish`) or its turn (`answer`)."""


class Recorded:
    """What an earlier process of this same attempt already logged: replayed, never done again."""

    def __init__(self, store: EventStore, run_id: str, agent: str, attempt: int) -> None:
        self.results: dict[tuple[int, str], ToolReturned] = {}
        self.called: set[tuple[int, str]] = set()
        """Tool calls logged as started: one in flight at a crash runs again, but is not logged again."""
        self.notes: dict[int, list[str]] = {}
        self.compactions: set[int] = set()
        """Steps before which the conversation was compacted (and the compaction logged)."""
        self.prompted = False
        self.stopped = False
        current = 1
        for event in store.events(
            run_id,
            agent=agent,
            kinds=["task_started", "prompt", "tool_call", "tool_result", "decision", "agent_stopped"],
        ):
            if isinstance(event, TaskStarted):
                current = event.attempt
            elif isinstance(event, AgentStopped) and current == attempt and event.reason != "interrupted":
                self.stopped = True
            elif isinstance(event, PromptGiven) and event.attempt == attempt:
                self.prompted = True
            elif isinstance(event, ToolCalled) and event.attempt == attempt:
                self.called.add((event.step, event.call.id))
            elif isinstance(event, ToolReturned) and event.attempt == attempt:
                self.results[(event.step, event.call_id)] = event
            elif isinstance(event, Decision) and event.topic == "notes" and event.data.get("attempt") == attempt:
                self.notes[int(event.data["step"])] = list(event.data["notes"])
            elif isinstance(event, Decision) and event.topic == "context" and event.data.get("attempt") == attempt:
                self.compactions.add(int(event.data["step"]))

    @property
    def last_checkpoint(self) -> str:
        saved = [r.checkpoint for r in sorted(self.results.values(), key=lambda r: r.seq) if r.checkpoint]
        return saved[-1] if saved else ""


def replayed(recorded: ToolReturned, call: ToolCall) -> ToolOutcome:
    """The outcome of a tool call as the log has it; a finishing tool is recognised by its name."""
    finished = call.name in FINISHING and not recorded.is_error
    args = call.arguments or {}
    summary = str(args.get("summary", args.get("answer", ""))) if finished else ""
    return ToolOutcome(
        output=recorded.output,
        is_error=recorded.is_error and not recorded.format_error,
        format_error=recorded.format_error,
        finished=finished,
        summary=summary,
    )
