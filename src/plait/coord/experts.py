"""Persistent experts: read-only agents that own an area of the code and answer questions all session long.

An expert is one agent with one conversation that never restarts. Each question (from a worker's
`ask_expert`, an investigation, a session's lead) joins that conversation as a new turn, so what the
expert read for an earlier question is still in its context: it answers the next one without reading
the code again. Questions are served one at a time, in the order they are logged.

Everything is in the event log: `ExpertStarted` when it comes into being, `QuestionAsked` before a
question enters its conversation, its model and tool calls as for any agent, and `QuestionAnswered`
with what the answer cost and the reading it drew on. After a crash the expert is rebuilt by feeding
the logged questions again in their logged order: every model call it had made is read back from the
journal (nothing is paid twice), and a question that was in flight is answered once, for whoever asks
it again with the same key.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from plait.agent._tool_args import tool_spec
from plait.agent.loop import Agent, AgentLimits, Spending, ToolSet
from plait.agent.tools import Toolbox, ToolOutcome
from plait.events.store import EventStore
from plait.events.types import ExpertStarted, QuestionAnswered, QuestionAsked
from plait.models.base import Model, ToolCall, ToolResultMessage, ToolSpec, Usage
from plait.models.pricing import PriceTable
from plait.workspace import LocalRunner

__all__ = [
    "EXPERT_PREFIX",
    "Answer",
    "AnswerTools",
    "Expert",
    "ExpertSpec",
    "ExpertTools",
    "Experts",
    "expert_id",
    "expert_system",
]

EXPERT_PREFIX = "expert:"
READING_TOOLS = frozenset({"read_file", "search", "list_files"})
Origin = Literal["config", "planner", "investigation", "session"]


def expert_id(name: str) -> str:
    """The agent id of expert `name` in the log."""
    return EXPERT_PREFIX + name


class ExpertSpec(BaseModel):
    """An expert to keep: its name, the files it owns, and what it is for."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=40, description="A short id such as 'storage' or 'api'.")
    area: list[str] = Field([], description="Globs of the files it owns, such as 'src/db/**'.")
    brief: str = Field("", description="What it knows about and answers for, in a sentence.")

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError("an expert's name is letters, digits, '_', '.' and '-', such as 'storage'")
        return value


_SYSTEM = """\
You are `{name}`, a long-lived expert on one area of a repository: {area}.
{brief}
Other agents (coding agents working in parallel, an investigation's lead, a user's session) ask you
questions about your area. You keep this one conversation for the whole session: every file you have
read and every answer you have given stays in your context, so never read again what you have already
read; answer from it. Read more of the code (read-only: read_file, search, list_files) only when a
question needs something you have not seen.

Answer each question with the `answer` tool: exact and short, with file:line references and exact
signatures, saying plainly what you did not check. One question at a time; every reply must call a tool.
"""


def expert_system(spec: ExpertSpec, repo_map: str = "") -> str:
    """The system prompt of an expert: who it is, its area, and (when given) the repository's map."""
    area = ", ".join(spec.area) if spec.area else "the whole repository"
    text = _SYSTEM.format(name=spec.name, area=area, brief=spec.brief.strip())
    return text + (f"\nThe repository:\n{repo_map.strip()}\n" if repo_map.strip() else "")


class _AnswerArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    answer: str = Field(min_length=1, description="The answer: exact, with file:line references.")


class _AskArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    expert: str = Field(min_length=1, description="The expert's name.")
    question: str = Field(min_length=1, description="One precise question: what you need to know and why.")


def _invalid(call: ToolCall, exc: ValidationError) -> ToolOutcome:
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
    return ToolOutcome(f"invalid call of {call.name}: {problems}. Call it again.", format_error=True)


class AnswerTools:
    """An expert's tools: the read-only tools of `inner`, and `answer` in place of `finish`."""

    def __init__(self, inner: ToolSet) -> None:
        self.inner = inner

    def specs(self) -> tuple[ToolSpec, ...]:
        doc = "Give your answer to the question you were just asked. It ends your turn; you keep your context."
        return tuple(s for s in self.inner.specs() if s.name != "finish") + (tool_spec("answer", _AnswerArgs, doc),)

    async def execute(self, call: ToolCall) -> ToolOutcome:
        if call.name == "finish":
            return ToolOutcome("you answer questions: call answer with your answer instead.", format_error=True)
        if call.name != "answer":
            return await self.inner.execute(call)
        if call.arguments is None:
            return ToolOutcome("the arguments of answer are not a JSON object; send one.", format_error=True)
        try:
            args = _AnswerArgs.model_validate(call.arguments)
        except ValidationError as exc:
            return _invalid(call, exc)
        return ToolOutcome("answered.", finished=True, summary=args.answer)


@dataclass(frozen=True)
class Answer:
    """An expert's answer to one question."""

    expert: str
    number: int
    text: str
    ok: bool = True
    reads: int = 0
    """Reading tool calls made for this question (0: answered from what it had read before)."""

    def render(self) -> str:
        if not self.ok:
            return f"expert `{self.expert}` could not answer: {self.text}"
        memory = "from what it had already read" if self.reads == 0 else f"after {self.reads} read(s) of the code"
        return f"expert `{self.expert}` answers ({memory}):\n{self.text}"


def _reading_tokens(messages: Sequence[object]) -> int:
    """Estimated tokens (4 characters each) of successful file reading in a conversation."""
    chars = sum(
        len(m.content)
        for m in messages
        if isinstance(m, ToolResultMessage) and m.name in READING_TOOLS and not m.is_error
    )
    return chars // 4


class Expert:
    """One persistent expert of run `run_id`, reading the checkout at `root` (which holds `commit`)."""

    def __init__(
        self,
        spec: ExpertSpec,
        *,
        run_id: str,
        store: EventStore,
        model: Model,
        prices: PriceTable,
        root: Path,
        commit: str = "",
        origin: Origin = "config",
        repo_map: str = "",
        budget: Spending | None = None,
        limits: AgentLimits | None = None,
    ) -> None:
        self.spec, self.run_id, self.store = spec, run_id, store
        self.id = expert_id(spec.name)
        self.root, self.commit, self.origin = root, commit, origin
        toolbox = Toolbox(root, LocalRunner(), read_only=True)
        self.agent = Agent(
            run_id=run_id,
            agent_id=self.id,
            model=model,
            toolbox=AnswerTools(toolbox),
            store=store,
            prices=prices,
            system=expert_system(spec, repo_map),
            limits=limits or AgentLimits(max_steps=30),
            budget=budget,
        )
        self._lock = asyncio.Lock()
        self._asked: list[QuestionAsked] = []
        self._answered: dict[int, QuestionAnswered] = {}
        self._fed = 0
        """Questions of the log already fed into this process's conversation."""
        self._load()

    def _load(self) -> None:
        started = False
        for event in self.store.events(self.run_id, agent=self.id, kinds=["expert", "question", "answer"]):
            if isinstance(event, ExpertStarted):
                started = True
            elif isinstance(event, QuestionAsked):
                self._asked.append(event)
            elif isinstance(event, QuestionAnswered):
                self._answered[event.number] = event
        if not started:
            self.store.append(
                ExpertStarted(
                    run_id=self.run_id,
                    agent=self.id,
                    name=self.spec.name,
                    area=list(self.spec.area),
                    brief=self.spec.brief,
                    commit=self.commit,
                    origin=self.origin,
                )
            )

    @property
    def questions(self) -> int:
        return len(self._asked)

    async def ask(self, asker: str, question: str, key: str = "") -> Answer:
        """Put `question` to the expert and wait for its answer; questions are answered one at a time.

        `key` names the asking call: a question asked again with the key of one already logged (the
        asker was replaying after a crash) is not asked twice; its logged answer, or the answer of its
        resumed turn, is returned.
        """
        async with self._lock:
            logged = next((q for q in self._asked if key and q.key == key), None)
            if logged is None:
                number = len(self._asked) + 1
                event = self.store.append(
                    QuestionAsked(
                        run_id=self.run_id, agent=self.id, asker=asker, number=number, question=question, key=key
                    )
                )
                assert isinstance(event, QuestionAsked)
                logged = event
                self._asked.append(logged)
            await self._catch_up(logged.number)
            return self._answer(logged.number)

    async def rebuild(self) -> None:
        """Feed every logged question back into the conversation now (calls are read back, not paid)."""
        async with self._lock:
            await self._catch_up(len(self._asked))

    async def _catch_up(self, upto: int) -> None:
        """Feed the logged questions up to number `upto` into the conversation, in order."""
        while self._fed < upto:
            question = self._asked[self._fed]
            self._fed += 1
            await self._turn(question)

    async def _turn(self, question: QuestionAsked) -> None:
        agent = self.agent
        usage, cost, before = agent.usage, agent.cost, len(agent.messages)
        result = await agent.turn(_question_text(question))
        if question.number in self._answered:
            return  # answered in an earlier process: its calls were read back from the log
        spent = Usage(
            input_tokens=agent.usage.input_tokens - usage.input_tokens,
            output_tokens=agent.usage.output_tokens - usage.output_tokens,
            cached_tokens=agent.usage.cached_tokens - usage.cached_tokens,
            cache_write_tokens=agent.usage.cache_write_tokens - usage.cache_write_tokens,
        )
        reads = sum(1 for m in agent.messages[before:] if isinstance(m, ToolResultMessage) and m.name in READING_TOOLS)
        text = result.summary if result.ok else f"it stopped ({result.reason}): {result.summary}"
        answered = QuestionAnswered(
            run_id=self.run_id,
            agent=self.id,
            asker=question.asker,
            number=question.number,
            answer=text,
            is_error=not result.ok,
            usage=spent,
            cost_usd=agent.cost - cost,
            read_tokens=_reading_tokens(agent.messages),
            reads=reads,
        )
        self.store.append(answered)
        self._answered[question.number] = answered

    def _answer(self, number: int) -> Answer:
        logged = self._answered[number]
        return Answer(self.spec.name, number, logged.answer, not logged.is_error, logged.reads)


def _question_text(question: QuestionAsked) -> str:
    return (
        f"Question {question.number}, from `{question.asker}`:\n{question.question.strip()}\n\n"
        "Answer it with the answer tool."
    )


class Experts:
    """The experts of one run or session, by name; each is created once and kept."""

    def __init__(self, experts: Sequence[Expert] = ()) -> None:
        self.by_name: dict[str, Expert] = {e.spec.name: e for e in experts}

    def add(self, expert: Expert) -> Expert:
        self.by_name.setdefault(expert.spec.name, expert)
        return self.by_name[expert.spec.name]

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def __len__(self) -> int:
        return len(self.by_name)

    def roster(self) -> str:
        """One line per expert, for a worker's brief or a tool's description."""
        lines = []
        for expert in self.by_name.values():
            area = ", ".join(expert.spec.area) or "the whole repository"
            brief = f": {expert.spec.brief}" if expert.spec.brief else ""
            lines.append(f"- `{expert.spec.name}` owns {area}{brief}")
        return "\n".join(lines)

    async def ask(self, asker: str, name: str, question: str, key: str = "") -> Answer | None:
        """The answer of expert `name`, or None when there is no such expert."""
        expert = self.by_name.get(name)
        return None if expert is None else await expert.ask(asker, question, key)


def specs_from_log(store: EventStore, run_id: str) -> list[tuple[ExpertSpec, ExpertStarted]]:
    """The experts a run's log says were started, in order, with their start events."""
    found: dict[str, tuple[ExpertSpec, ExpertStarted]] = {}
    for event in store.events(run_id, kinds=["expert"]):
        if isinstance(event, ExpertStarted) and event.name not in found:
            spec = ExpertSpec(name=event.name, area=list(event.area), brief=event.brief)
            found[event.name] = (spec, event)
    return list(found.values())


_ASK_DOC = (
    "Ask one of the run's persistent experts a question about the code it owns, instead of reading that "
    "code yourself. Each expert has already read its area and keeps its context for the whole run, so its "
    "answer is fast and exact (file:line, signatures). Ask precise questions; one at a time. The experts:\n"
)


class ExpertTools:
    """`inner`'s tools for agent `asker`, plus `ask_expert` to the run's experts."""

    def __init__(self, inner: ToolSet, asker: str, experts: Experts) -> None:
        self.inner, self.asker, self.experts = inner, asker, experts

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
        if call.arguments is None:
            return ToolOutcome("the arguments of ask_expert are not a JSON object; send one.", format_error=True)
        try:
            args = _AskArgs.model_validate(call.arguments)
        except ValidationError as exc:
            return _invalid(call, exc)
        if args.expert not in self.experts:
            names = ", ".join(self.experts.by_name)
            return ToolOutcome(f"there is no expert {args.expert!r}; the experts are: {names}.", is_error=True)
        digest = hashlib.sha256(args.question.encode()).hexdigest()[:12]
        answer = await self.experts.ask(self.asker, args.expert, args.question, key=f"{self.asker}:{call.id}:{digest}")
        assert answer is not None
        return ToolOutcome(answer.render(), is_error=not answer.ok)
