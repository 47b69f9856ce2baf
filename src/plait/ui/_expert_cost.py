"""Whether a run's experts paid for themselves: what each spent against the reading it saved the agents that asked.

The saving is an estimate. When an expert answers, the code it has read so far is in its context
(`QuestionAnswered.read_tokens`): without the expert, the asker would have read that much itself. An
asker is credited once, with the largest such reading among its answered questions, less the files
the asker read itself anyway (its own read_file calls).

An investigator's first answer is the investigation itself, which the lead would have paid for in
any case: only its follow-up answers are weighed against what they saved.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from plait.globs import normalize
from plait.ui import _fmt
from plait.ui._state import EXPERT_PREFIX, TokenSum

if TYPE_CHECKING:  # told apart by their kind: `plait cost` reads a log without the models too
    from plait.events.types import (
        Event,
        ExpertStarted,
        QuestionAnswered,
        QuestionAsked,
        ToolCalled,
        ToolReturned,
    )
    from plait.messages import ToolCall

__all__ = ["COLUMNS_NOTE", "SAVING_NOTE", "ExpertCost", "expert_costs", "saving_note", "trade_line"]

SAVING_NOTE = (
    "saved reading is an estimate: for each agent that asked, the code in the expert's context when it answered "
    "(counted once per asker), less the files that agent read itself"
)
_FIRST_NOTE = "; an investigator's first answer is the investigation itself, so only follow-up answers are weighed"
COLUMNS_NOTE = (
    "questions: answered/asked; from memory: answers that read no more code; reads: read, search and list "
    "calls made answering; calls: model calls; tokens and cost: all its model calls"
)
"""What the columns of the experts' table count."""


@dataclass
class ExpertCost:
    """One expert's questions, spending and the reading it saved (estimated)."""

    name: str
    agent: str
    questions: int = 0
    answered: int = 0
    from_memory: int = 0
    """Answers given without reading any more code."""
    reads: int = 0
    """Reading tool calls made while answering."""
    calls: int = 0
    usage: TokenSum = field(default_factory=TokenSum)
    cost_usd: float = 0.0
    saved_tokens: int = 0
    """Estimated tokens of reading the askers did not have to do."""
    askers: dict[str, int] = field(default_factory=dict)
    """Questions answered, by asker."""
    origin: str = ""
    """Why it exists: config, planner, investigation or session."""
    first: QuestionAnswered | None = None
    """An investigator's first answer: the investigation itself, not weighed against a saving."""

    @property
    def spent_tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def weighed_tokens(self) -> int:
        """Tokens spent on the answers weighed against the saving (all but an investigator's first)."""
        return self.spent_tokens - (self.first.usage.total_tokens if self.first else 0)

    @property
    def weighed_usd(self) -> float:
        return self.cost_usd - (self.first.cost_usd if self.first else 0.0)

    @property
    def weighed_answers(self) -> int:
        return self.answered - (self.first is not None)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "agent": self.agent,
            "questions": self.questions,
            "answered": self.answered,
            "from_memory": self.from_memory,
            "reads": self.reads,
            "calls": self.calls,
            "usage": self.usage.as_json(),
            "cost_usd": round(self.cost_usd, 6),
            "saved_tokens_estimate": self.saved_tokens,
            "askers": self.askers,
            "origin": self.origin,
            "weighed_tokens": self.weighed_tokens,
            "weighed_cost_usd": round(self.weighed_usd, 6),
        }


def _path(call: ToolCall | None) -> str:
    if call is None or not isinstance(call.arguments, dict):
        return ""
    return normalize(str(call.arguments.get("path", "")))


def expert_costs(events: list[Event], spending: dict[str, tuple[int, TokenSum, float]]) -> list[ExpertCost]:
    """Each expert of the run, with `spending` (agent -> calls, usage, dollars) and its estimated saving."""
    experts: dict[str, ExpertCost] = {}
    called: dict[tuple[str, str], ToolCall] = {}
    read_by: dict[str, set[str]] = defaultdict(set)
    """Files each agent read itself."""
    in_context: dict[str, dict[str, int]] = defaultdict(dict)
    """Tokens of each file an expert has read so far."""
    answers: list[tuple[QuestionAnswered, dict[str, int]]] = []
    for event in events:
        kind = event.kind
        if kind == "expert":
            started = cast("ExpertStarted", event)
            experts.setdefault(started.agent, ExpertCost(started.name, started.agent)).origin = started.origin
        elif kind == "question":
            asked = cast("QuestionAsked", event)
            expert = experts.setdefault(asked.agent, ExpertCost(asked.agent.removeprefix(EXPERT_PREFIX), asked.agent))
            expert.questions += 1
        elif kind == "tool_call" and (call := cast("ToolCalled", event).call).name == "read_file":
            called[(event.agent, call.id)] = call
            if not event.agent.startswith(EXPERT_PREFIX) and (path := _path(call)):
                read_by[event.agent].add(path)
        elif kind == "tool_result" and event.agent.startswith(EXPERT_PREFIX):
            result = cast("ToolReturned", event)
            path = _path(called.get((result.agent, result.call_id))) if result.name == "read_file" else ""
            if path and not result.is_error:
                files = in_context[result.agent]
                files[path] = files.get(path, 0) + len(result.output) // 4
        elif kind == "answer":
            answers.append((cast("QuestionAnswered", event), dict(in_context[event.agent])))
    best: dict[tuple[str, str], int] = {}
    for answer, files in answers:
        expert = experts.setdefault(answer.agent, ExpertCost(answer.agent.removeprefix(EXPERT_PREFIX), answer.agent))
        if answer.is_error:
            continue
        expert.answered += 1
        expert.from_memory += answer.reads == 0
        expert.reads += answer.reads
        expert.askers[answer.asker] = expert.askers.get(answer.asker, 0) + 1
        if expert.origin == "investigation" and answer.number == 1:
            expert.first = answer
            continue
        own = sum(tokens for path, tokens in files.items() if path in read_by[answer.asker])
        key = (answer.agent, answer.asker)
        best[key] = max(best.get(key, 0), max(answer.read_tokens - own, 0))
    for (agent, _), saved in best.items():
        experts[agent].saved_tokens += saved
    for expert in experts.values():
        expert.calls, expert.usage, expert.cost_usd = spending.get(expert.agent, (0, TokenSum(), 0.0))
    return list(experts.values())


def saving_note(experts: list[ExpertCost]) -> str:
    """How the saving is estimated, for these experts."""
    return SAVING_NOTE + (_FIRST_NOTE if any(e.origin == "investigation" for e in experts) else "")


def trade_line(experts: list[ExpertCost]) -> str:
    """The measured trade: tokens the experts spent against the reading they saved the agents that asked.

    An investigator's first answer is counted apart, as the investigation: only what came after is weighed.
    """
    spent, saved = sum(e.weighed_tokens for e in experts), sum(e.saved_tokens for e in experts)
    answered, usd = sum(e.weighed_answers for e in experts), sum(e.weighed_usd for e in experts)
    first = [e.first for e in experts if e.first is not None]
    head, what = "", "experts"
    if first:
        tokens, cost = sum(a.usage.total_tokens for a in first), sum(a.cost_usd for a in first)
        head = f"investigation: {_fmt.tokens(tokens)} tokens ({_fmt.usd(cost)}) for the first answers of "
        head += f"{len(first)} investigator(s); "
        what = "follow-ups" if all(e.origin == "investigation" for e in experts) else "other answers"
        if not answered:
            return head + "no follow-up answers yet, so nothing to weigh against a saving"
    verdict = "they saved more than they spent" if saved > spent else "they spent more than they saved"
    return head + (
        f"{what}: {_fmt.tokens(spent)} tokens ({_fmt.usd(usd)}) spent answering {answered} question(s), against "
        f"~{_fmt.tokens(saved)} tokens of reading saved the agents that asked: {verdict}"
    )
