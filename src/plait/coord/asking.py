"""`ask_expert`: the tool through which an agent puts a question to the run's persistent experts."""

from __future__ import annotations

import hashlib

from pydantic import Field

from plait.agent._tool_args import TEXT_LIMIT, ToolArgs, tool_spec
from plait.agent.loop import ToolSet
from plait.agent.tools import ToolOutcome, parse_arguments
from plait.coord.experts import Experts
from plait.messages import ToolCall, ToolSpec

__all__ = ["ExpertTools"]


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


class ExpertTools:
    """`inner`'s tools for agent `asker` (in its attempt `attempt`), plus `ask_expert` to the run's experts."""

    def __init__(self, inner: ToolSet, asker: str, experts: Experts, attempt: int = 1) -> None:
        self.inner, self.asker, self.experts, self.attempt = inner, asker, experts, attempt

    def specs(self) -> tuple[ToolSpec, ...]:
        inner = self.inner.specs()
        if not len(self.experts):
            return inner
        ask = tool_spec("ask_expert", _AskArgs, _ASK_DOC + self.experts.roster())
        rest = tuple(s for s in inner if s.name != "finish")
        return rest + (ask,) + tuple(s for s in inner if s.name == "finish")

    async def execute(self, call: ToolCall) -> ToolOutcome:
        if call.name != "ask_expert" or not len(self.experts):
            return await self.inner.execute(call)
        args = parse_arguments(call, _AskArgs)
        if isinstance(args, ToolOutcome):
            return args
        if args.expert not in self.experts:
            names = ", ".join(self.experts.names())
            return ToolOutcome(f"there is no expert {args.expert!r}; the experts are: {names}.", is_error=True)
        digest = hashlib.sha256(args.question.encode()).hexdigest()[:12]
        # a retried attempt may reuse a call id of the one before: its questions are new ones
        caller = self.asker if self.attempt == 1 else f"{self.asker}.{self.attempt}"
        answer = await self.experts.ask(self.asker, args.expert, args.question, key=f"{caller}:{call.id}:{digest}")
        assert answer is not None
        return ToolOutcome(answer.render(), is_error=not answer.ok)
