"""The events of a persistent expert: it came into being, a question was put to it, and its answer.

Part of the event union of `plait.events.types`, which is where they are imported from.
"""

from __future__ import annotations

from typing import Literal

from plait.events._base import _Event
from plait.messages import Usage

__all__ = ["EXPERT_PREFIX", "ExpertStarted", "QuestionAnswered", "QuestionAsked"]

EXPERT_PREFIX = "expert:"
"""Agent ids of persistent experts start with it: `expert:<name>`."""


class ExpertStarted(_Event):
    """A persistent agent (an expert on an area, an investigator, a session's helper) came into being.

    `agent` is its id (`expert:<name>`); it reads `commit` (read-only) and keeps its context for the
    whole run or session: every question it is asked joins one conversation.
    """

    kind: Literal["expert"] = "expert"
    name: str
    area: list[str] = []
    """Globs of the files it owns and reads first."""
    brief: str = ""
    commit: str = ""
    origin: Literal["config", "planner", "investigation", "session"] = "config"


class QuestionAsked(_Event):
    """A question put to an expert (`agent`); `key` makes a question asked again after a crash the same one."""

    kind: Literal["question"] = "question"
    asker: str
    number: int
    question: str
    key: str = ""


class QuestionAnswered(_Event):
    """An expert's answer to question `number`, with what answering it cost and the reading it drew on."""

    kind: Literal["answer"] = "answer"
    asker: str
    number: int
    answer: str
    is_error: bool = False
    usage: Usage = Usage()
    cost_usd: float = 0.0
    read_tokens: int = 0
    """Estimated tokens of file reading in the expert's context when it answered: what the asker would
    otherwise have read to answer the question itself."""
    reads: int = 0
    """Reading tool calls the expert made while answering this one question (0: it answered from memory)."""
    references: list[str] = []
    """The places the answer rests on (`path:line`), as the expert gave them in its answer's own field."""
    not_checked: str = ""
    """What the expert said it did not check."""
