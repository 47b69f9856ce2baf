"""`ask_expert`: the tool through which an agent puts a question to the run's persistent experts."""

from __future__ import annotations

import hashlib

from pydantic import Field

from plait.agent.arguments import TEXT_LIMIT, ToolArgs
from plait.agent.toolset import Tool, ToolOutcome, Toolset
from plait.coord.experts import Experts
from plait.messages import ToolCall

__all__ = ["Asking", "asking_tools"]


class _AskArgs(ToolArgs):
    expert: str = Field(min_length=1, description="The expert's name.")
    question: str = Field(
        max_length=TEXT_LIMIT, min_length=1, description="One precise question: what you need to know and why."
    )


_ASK_DOC = (
    "Ask one of the run's persistent experts a question about the code it owns, instead of reading that "
    "code yourself. Each expert has already read its area and keeps its context for the whole run, so its "
    "answer is fast and exact (file:line, signatures). Ask precise questions; one at a time. The experts:\n"
)


class Asking:
    """Agent `asker` (in its attempt `attempt`) asking the run's `experts`."""

    def __init__(self, asker: str, experts: Experts, attempt: int = 1) -> None:
        self.asker, self.experts, self.attempt = asker, experts, attempt

    async def ask(self, args: _AskArgs, call: ToolCall) -> ToolOutcome:
        """The ask_expert tool."""
        return await self.answer(args.expert, args.question, call)

    async def answer(self, expert: str, question: str, call: ToolCall) -> ToolOutcome:
        """Expert `expert`'s answer to `question`, asked by `call`, or the experts' names when there is no such one."""
        if expert not in self.experts:
            names = ", ".join(self.experts.names())
            return ToolOutcome(f"there is no expert {expert!r}; the experts are: {names}.", is_error=True)
        digest = hashlib.sha256(question.encode()).hexdigest()[:12]
        # a retried attempt may reuse a call id of the one before: its questions are new ones
        caller = self.asker if self.attempt == 1 else f"{self.asker}.{self.attempt}"
        answer = await self.experts.ask(self.asker, expert, question, key=f"{caller}:{call.id}:{digest}")
        assert answer is not None
        return ToolOutcome(answer.render(), is_error=not answer.ok)


def asking_tools(asker: str, experts: Experts, attempt: int = 1) -> Toolset:
    """`ask_expert` for agent `asker`, its description naming the experts; no tool when the run has none."""
    if not len(experts):
        return Toolset()
    return Toolset([Tool("ask_expert", _AskArgs, Asking(asker, experts, attempt).ask, _ASK_DOC + experts.roster())])
