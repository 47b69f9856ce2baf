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
from collections.abc import Sequence
from pathlib import Path

from plait.agent.context import ContextBudget, context_budget
from plait.agent.loop import Agent, AgentLimits, Spending
from plait.agent.tools import READ_TOOLS, Toolbox
from plait.coord._prompts import Origin, expert_system
from plait.coord.answering import Answer, answer_arguments, answer_tools, logged_strings
from plait.events.runlog import RunLog
from plait.events.types import EXPERT_PREFIX, ExpertStarted, QuestionAnswered, QuestionAsked, ToolReturned
from plait.messages import Model, ToolResultMessage
from plait.models.pricing import PriceTable
from plait.plan_model import ExpertSpec
from plait.settings import Settings
from plait.workspace import LocalShell

__all__ = [
    "EXPERT_STEPS",
    "EXPERT_PREFIX",
    "Expert",
    "ExpertSpec",
    "Experts",
    "Origin",
    "expert_id",
    "expert_system",
    "roster",
]

EXPERT_STEPS = 30
"""Model calls an expert may make for one answer (fewer when the settings allow fewer)."""


def expert_id(name: str) -> str:
    """The agent id of expert `name` in the log."""
    return EXPERT_PREFIX + name


def _reading_tokens(messages: Sequence[object]) -> int:
    """Estimated tokens (4 characters each) of successful file reading in a conversation."""
    chars = sum(
        len(m.content) for m in messages if isinstance(m, ToolResultMessage) and m.name in READ_TOOLS and not m.is_error
    )
    return chars // 4


class Expert:
    """One persistent expert of the run of `log`, reading the checkout at `root` (which holds `commit`)."""

    def __init__(
        self,
        spec: ExpertSpec,
        *,
        log: RunLog,
        model: Model,
        prices: PriceTable,
        root: Path,
        commit: str = "",
        origin: Origin = "config",
        repo_map: str = "",
        budget: Spending | None = None,
        limits: AgentLimits | None = None,
        context: ContextBudget | None = None,
    ) -> None:
        """`context` is the budget its conversation is compacted against (default: its model's built-in one)."""
        self.spec, self.log = spec, log
        self.id = expert_id(spec.name)
        self.root, self.commit, self.origin = root, commit, origin
        toolbox = Toolbox(root, LocalShell(), read_only=True)
        self.agent = Agent(
            log=log,
            agent_id=self.id,
            model=model,
            toolbox=answer_tools(toolbox, structured=origin == "investigation"),
            prices=prices,
            system=expert_system(spec, repo_map, origin),
            limits=limits or AgentLimits(max_steps=EXPERT_STEPS),
            budget=budget,
            context=context or context_budget(model.name),
        )
        self._asked: list[QuestionAsked] = []
        self._answered: dict[int, QuestionAnswered] = {}
        self._through = 0
        """Questions of the log whose turn this process's conversation has been through."""
        self._serving: asyncio.Task[None] | None = None
        """The task feeding questions into the conversation: the expert's own, so a cancelled asker cannot cut
        a turn short and leave the conversation half-way through a tool call for the next question."""
        self._waiters: dict[int, asyncio.Future[None]] = {}
        self._load()

    @classmethod
    def from_settings(
        cls,
        spec: ExpertSpec,
        settings: Settings,
        *,
        log: RunLog,
        model: Model,
        root: Path,
        commit: str = "",
        origin: Origin = "config",
        repo_map: str = "",
        budget: Spending | None = None,
        prices: PriceTable | None = None,
        most_steps: int | None = EXPERT_STEPS,
    ) -> Expert:
        """An expert of the run of `log`, with what the settings give every expert: its limits (at most `most_steps`
        model calls an answer), its context budget and, unless given, the prices of its calls."""
        return cls(
            spec,
            log=log,
            model=model,
            prices=prices or PriceTable(settings.prices),
            root=root,
            commit=commit,
            origin=origin,
            repo_map=repo_map,
            budget=budget,
            limits=AgentLimits.from_settings(settings, most_steps=most_steps),
            context=context_budget(model.name, settings.context_tokens),
        )

    def _load(self) -> None:
        started = False
        for event in self.log.events(agent=self.id, kinds=["expert", "question", "answer"]):
            if isinstance(event, ExpertStarted):
                started = True
            elif isinstance(event, QuestionAsked):
                self._asked.append(event)
            elif isinstance(event, QuestionAnswered):
                self._answered[event.number] = event
        if not started:
            self.log.append(
                ExpertStarted(
                    run_id=self.log.run_id,
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
        logged = next((q for q in self._asked if key and q.key == key), None)
        if logged is None:
            number = len(self._asked) + 1
            event = self.log.append(
                QuestionAsked(
                    run_id=self.log.run_id, agent=self.id, asker=asker, number=number, question=question, key=key
                )
            )
            assert isinstance(event, QuestionAsked)
            logged = event
            self._asked.append(logged)
        if logged.number not in self._answered:
            await self._served(logged.number)
        if logged.number not in self._answered:
            return Answer(self.spec.name, logged.number, "its turn ended without an answer", ok=False)
        return self._answer(logged.number)

    async def rebuild(self) -> None:
        """Feed every logged question back into the conversation now (calls are read back, not paid)."""
        if self._asked:
            await self._served(len(self._asked))

    async def close(self) -> None:
        """Stop a turn in progress: the run or session is over (a resumption answers it from the log)."""
        if self._serving is not None and not self._serving.done():
            self._serving.cancel()
            await asyncio.wait([self._serving])

    async def _served(self, number: int) -> None:
        """Wait until question `number` has been through the conversation, fed in logged order."""
        if self._through >= number:
            return
        waiter = self._waiters.get(number)
        if waiter is None:
            waiter = self._waiters[number] = asyncio.get_running_loop().create_future()
        if self._serving is None or self._serving.done():
            self._serving = asyncio.ensure_future(self._serve())
        await asyncio.shield(waiter)

    async def _serve(self) -> None:
        """Feed the logged questions not yet through the conversation into it, in order."""
        try:
            while self._through < len(self._asked):
                question = self._asked[self._through]
                await self._turn(question)
                self._through += 1
                waiter = self._waiters.pop(question.number, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
        except BaseException as exc:
            # every asker still waiting hears of it; the next question starts a new feed
            for waiter in self._waiters.values():
                if not waiter.done():
                    waiter.cancel() if isinstance(exc, asyncio.CancelledError) else waiter.set_exception(exc)
            self._waiters.clear()
            raise

    async def _turn(self, question: QuestionAsked) -> None:
        agent = self.agent
        usage, cost, before = agent.usage, agent.cost, agent.steps
        result = await agent.turn(_question_text(question))
        if question.number in self._answered:
            return  # answered in an earlier process: its calls were read back from the log
        spent = agent.usage - usage
        reads = self._reads(question, after=before)
        text = result.summary if result.ok else f"it stopped ({result.reason}): {result.summary}"
        given = answer_arguments(self.log, self.id, question.seq) if result.ok else {}
        answered = QuestionAnswered(
            run_id=self.log.run_id,
            agent=self.id,
            asker=question.asker,
            number=question.number,
            answer=text,
            is_error=not result.ok,
            usage=spent,
            cost_usd=agent.cost - cost,
            read_tokens=_reading_tokens(agent.messages),
            reads=reads,
            references=logged_strings(given.get("references")),
            not_checked=str(given.get("not_checked") or ""),
        )
        self.log.append(answered)
        self._answered[question.number] = answered

    def _reads(self, question: QuestionAsked, after: int) -> int:
        """Reading tool calls made for `question` (after step `after`), from the log: a compacted conversation
        holds only its latest steps whole."""
        events = self.log.events(agent=self.id, kinds=["tool_result"], after=question.seq)
        return sum(1 for e in events if isinstance(e, ToolReturned) and e.step > after and e.name in READ_TOOLS)

    def _answer(self, number: int) -> Answer:
        return Answer.logged(self.spec.name, self._answered[number])


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

    def names(self) -> list[str]:
        return list(self.by_name)

    def roster(self) -> str:
        """One line per expert, for a worker's brief or a tool's description."""
        return roster([expert.spec for expert in self.by_name.values()])

    async def ask(self, asker: str, name: str, question: str, key: str = "") -> Answer | None:
        """The answer of expert `name`, or None when there is no such expert."""
        expert = self.by_name.get(name)
        return None if expert is None else await expert.ask(asker, question, key)

    async def close(self) -> None:
        """Stop every expert's turn in progress."""
        for expert in self.by_name.values():
            await expert.close()


def roster(specs: Sequence[ExpertSpec]) -> str:
    """One line per expert, for a worker's brief or a tool's description."""
    lines = []
    for spec in specs:
        area = ", ".join(spec.area) or "the whole repository"
        brief = f": {spec.brief}" if spec.brief else ""
        lines.append(f"- `{spec.name}` owns {area}{brief}")
    return "\n".join(lines)


def specs_from_log(log: RunLog) -> list[tuple[ExpertSpec, ExpertStarted]]:
    """The experts a run's log says were started, in order, with their start events."""
    found: dict[str, tuple[ExpertSpec, ExpertStarted]] = {}
    for event in log.events(kinds=["expert"]):
        if isinstance(event, ExpertStarted) and event.name not in found:
            spec = ExpertSpec(name=event.name, area=list(event.area), brief=event.brief)
            found[event.name] = (spec, event)
    return list(found.values())
