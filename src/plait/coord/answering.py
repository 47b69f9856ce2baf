"""How an expert answers: the `answer` tool that ends its turn (in place of `finish`), the answer as a value, and
the answer's arguments read back from the log (a replayed call runs no tool)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field

from plait.agent.arguments import TEXT_LIMIT, ToolArgs
from plait.agent.toolset import FINISH, Tool, ToolOutcome, Toolset
from plait.events.runlog import RunLog
from plait.events.types import QuestionAnswered, ToolCalled
from plait.messages import ToolCall

__all__ = ["Answer", "answer_arguments", "answer_tools", "logged_strings"]

_REFERENCES = "Every place the answer rests on, as 'path:line' or 'path:start-end', the path from the repository root."
_NOT_CHECKED = "What you did not check or are unsure of; 'nothing' when you checked it all."


class _AnswerArgs(ToolArgs):
    answer: str = Field(
        max_length=TEXT_LIMIT, min_length=1, description="The answer: exact, with file:line references."
    )
    references: list[str] = Field([], description=_REFERENCES)
    not_checked: str = Field("", max_length=TEXT_LIMIT, description=_NOT_CHECKED)


class _FindingArgs(_AnswerArgs):
    """An investigator's answer: its references and what it did not check are asked for, not optional."""

    answer: str = Field(
        max_length=TEXT_LIMIT, min_length=1, description="Your finding: exact and short, with file:line references."
    )
    references: list[str] = Field(description=_REFERENCES)
    not_checked: str = Field(max_length=TEXT_LIMIT, description=_NOT_CHECKED)


def answer_tools(inner: Toolset, *, structured: bool = False) -> Toolset:
    """An expert's tools: the read-only tools of `inner`, and `answer` in place of `finish`.

    `structured` (an investigator's) asks for the answer's references and what it did not check as
    fields of their own; other experts may give them.
    """
    doc = "Give your answer to the question you were just asked. It ends your turn; you keep your context."
    args = _FindingArgs if structured else _AnswerArgs
    refused = "you answer questions: call answer with your answer instead."
    return inner.without({FINISH}, because=refused) | Toolset([Tool("answer", args, _answered, doc)])


async def _answered(args: _AnswerArgs, call: ToolCall) -> ToolOutcome:
    return ToolOutcome("answered.", finished=True, summary=args.answer)


@dataclass(frozen=True)
class Answer:
    """An expert's answer to one question."""

    expert: str
    number: int
    text: str
    ok: bool = True
    reads: int = 0
    """Reading tool calls (read, search, list) made for this question (0: answered from what it had read before)."""
    references: tuple[str, ...] = ()
    not_checked: str = ""

    @classmethod
    def logged(cls, expert: str, e: QuestionAnswered) -> Answer:
        return cls(expert, e.number, e.answer, not e.is_error, e.reads, tuple(e.references), e.not_checked)

    def render(self) -> str:
        if not self.ok:
            return f"expert `{self.expert}` could not answer: {self.text}"
        memory = "from what it had already read" if self.reads == 0 else f"after {self.reads} read/search call(s)"
        text = f"expert `{self.expert}` answers ({memory}):\n{self.text}"
        if self.references:
            text += "\nReferences: " + ", ".join(self.references)
        return text + (f"\nNot checked: {self.not_checked}" if self.not_checked.strip() else "")


def answer_arguments(log: RunLog, agent: str, after: int) -> dict[str, Any]:
    """The arguments of `agent`'s latest `answer` call logged after sequence number `after`, from the log (a
    replayed call runs no tool, so the log is where they are)."""
    calls = [
        e.call.arguments or {}
        for e in log.events(agent=agent, kinds=["tool_call"], after=after)
        if isinstance(e, ToolCalled) and e.call.name == "answer"
    ]
    return dict(calls[-1]) if calls else {}


def logged_strings(value: object) -> list[str]:
    """The non-empty strings of a logged list argument (anything else is left out)."""
    return [v.strip() for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []
