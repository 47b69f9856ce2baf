"""What a lead agent that lasts needs: a read-only checkout, its conversation in the log, its experts rebuilt.

A lead (an investigation's, a session's) is one `Agent` driven a turn at a time. Each message from the
user is logged before the lead sees it, and its reply after, so a later process rebuilds the lead by
feeding the logged messages again: every model call and tool result is read back from the log, and
a turn that was in flight when the process died is finished once, live.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from plait.agent.arguments import TEXT_LIMIT, ToolArgs
from plait.agent.context import context_budget
from plait.agent.instructions import ProjectInstructions
from plait.agent.loop import Agent, AgentLimits, AgentResult, Spending
from plait.agent.toolset import FINISH, Run, Tool, ToolOutcome, Toolset
from plait.coord.asking import Asking
from plait.coord.experts import Expert, Experts, ExpertSpec, Origin, specs_from_log
from plait.events.runlog import RunLog
from plait.events.store import redaction
from plait.events.types import LeadReplied, PromptGiven, RunKind, RunStarted, UserSaid
from plait.messages import Model, ToolCall
from plait.models.pricing import PriceTable
from plait.plan.repomap import repo_map
from plait.reconcile.verify import IntegrationWorktree
from plait.settings import Settings
from plait.workspace import Repo

__all__ = [
    "LEAD",
    "ExpertMaker",
    "Kind",
    "Transcript",
    "UserTurn",
    "close_checkout",
    "lead_agent",
    "lead_ask_tools",
    "logged_system",
    "mark_kind",
    "open_checkout",
    "read_only",
    "rebuild_experts",
    "run_kind",
    "started",
]

LEAD = "lead"
"""The agent id of a run's lead."""

Kind = Literal["investigation", "session"]


def mark_kind(log: RunLog, kind: Kind) -> None:
    """Say in the log what the run is, so commands that continue runs tell it from a change."""
    what = "an investigation: read-only agents answer a question" if kind == "investigation" else "a session"
    log.append(RunKind(run_id=log.run_id, decision=f"this run is {what}", what=kind))


def run_kind(log: RunLog) -> str:
    """`investigation`, `session`, or '' for a run that makes a change."""
    for event in log.events(kinds=["run_kind"]):
        if isinstance(event, RunKind):
            return event.what
    return ""


def started(log: RunLog) -> RunStarted | None:
    return next((e for e in log.events(kinds=["run_started"]) if isinstance(e, RunStarted)), None)


def logged_system(log: RunLog, agent: str) -> str | None:
    """The system prompt `agent` was first given: a rebuilt agent keeps it word for word, or its calls would differ."""
    for event in log.events(agent=agent, kinds=["prompt"]):
        if isinstance(event, PromptGiven):
            return event.system
    return None


def open_checkout(repo: Repo, run_id: str, commit: str, name: str) -> Path:
    """A read-only checkout of `commit` (a detached worktree) for the run's lead and experts to read.

    One a killed process left is reused, checked out afresh at the logged commit and cleaned.
    """
    path = repo.plait_dir() / "worktrees" / run_id / name
    return IntegrationWorktree(repo, path, keep=()).checkout(commit)


def close_checkout(repo: Repo, path: Path) -> None:
    """Remove a checkout made by `open_checkout`; its run's log keeps everything read from it."""
    IntegrationWorktree(repo, path, keep=()).remove()
    with contextlib.suppress(OSError):
        path.parent.rmdir()


def lead_agent(maker: ExpertMaker, tools: Toolset, prompt: str, files: list[str]) -> Agent:
    """The lead of run `maker.log.run_id`, with the system prompt it was first given (from the log); a new lead's is
    `prompt` and the map of the repository (of tracked `files`) it reads."""
    s = maker.settings
    system = logged_system(maker.log, LEAD)
    if system is None:
        known = maker.instructions()
        system = prompt + (f"\n{known}" if known else "")
        system += "\nThe repository:\n" + repo_map(maker.root, budget=6000, files=files).strip() + "\n"
    return Agent(
        log=maker.log,
        agent_id=LEAD,
        model=maker.model,
        toolbox=tools,
        prices=maker.prices,
        system=system,
        limits=AgentLimits.from_settings(s),
        budget=maker.budget,
        context=context_budget(maker.model.name, s.context_tokens),
    )


@dataclass
class ExpertMaker:
    """How to make an expert of a run: where it reads and what it is charged to."""

    log: RunLog
    model: Model
    prices: PriceTable
    root: Path
    commit: str
    settings: Settings
    budget: Spending | None = None

    def instructions(self) -> str:
        """The project instructions of the root (AGENTS.md, CLAUDE.md) as the run's commit has them."""
        return ProjectInstructions(self.root, self.commit, self.settings.instructions_chars).root_section()

    def expert(self, spec: ExpertSpec, origin: Origin) -> Expert:
        """An expert of the run; a new one is given the project instructions, a rebuilt one what it was given."""
        expert = Expert.from_settings(
            spec,
            self.settings,
            log=self.log,
            model=self.model,
            root=self.root,
            commit=self.commit,
            origin=origin,
            budget=self.budget,
            prices=self.prices,
            most_steps=None,  # a lead's investigators and helpers answer with the steps every agent has
        )
        system = logged_system(self.log, expert.id)
        known = self.instructions() if system is None else ""
        expert.agent.system = system or expert.agent.system + (f"\n{redaction(self.log.store)(known)}" if known else "")
        return expert


async def rebuild_experts(maker: ExpertMaker, experts: Experts) -> None:
    """Every expert the run's log says was started, its conversation fed again from the log (nothing paid)."""
    for spec, event in specs_from_log(maker.log):
        if spec.name not in experts:
            experts.add(maker.expert(spec, event.origin))
    for expert in experts.by_name.values():
        await expert.rebuild()


@dataclass(frozen=True)
class UserTurn:
    """One message of the user to the lead, as logged: the turn of the lead it starts."""

    turn: int
    text: str
    seq: int


class Transcript:
    """The user's messages to a lead and its replies, kept in the log as the lead's `UserSaid` and `LeadReplied`."""

    def __init__(self, log: RunLog, topic: Literal["question", "session"]) -> None:
        self.log, self.topic = log, topic
        self.messages: list[UserTurn] = []
        self.replies: dict[int, LeadReplied] = {}
        for event in log.events(agent=LEAD, kinds=["user_said", "lead_replied"]):
            if isinstance(event, UserSaid) and event.topic == topic:
                self.messages.append(UserTurn(event.turn, event.text, event.seq))
            elif isinstance(event, LeadReplied):
                self.replies[event.turn] = event

    def said(self, text: str) -> UserTurn:
        """Log the user's next message; the lead sees it only after."""
        turn = len(self.messages) + 1
        event = UserSaid(
            run_id=self.log.run_id,
            agent=LEAD,
            topic=self.topic,
            decision=f"message {turn} from the user",
            turn=turn,
            text=text,
        )
        said = UserTurn(turn, text, self.log.append(event).seq)
        self.messages.append(said)
        return said

    def replied(self, turn: int, result: AgentResult, *, disagreements: str = "") -> LeadReplied:
        """Log the lead's reply to message `turn`."""
        text = result.summary if result.ok else f"the lead stopped ({result.reason}): {result.summary}"
        reply = LeadReplied(
            run_id=self.log.run_id,
            agent=LEAD,
            decision=f"reply {turn} to the user",
            turn=turn,
            text=text,
            ok=result.ok,
            disagreements=disagreements,
        )
        self.log.append(reply)
        self.replies[turn] = reply
        return reply

    async def replay(self, lead: Agent) -> list[tuple[UserTurn, AgentResult]]:
        """Feed every logged message to a new `lead`; returns the turns no reply was logged for (finished now)."""
        open_turns = []
        for said in self.messages:
            result = await lead.turn(said.text)
            if said.turn not in self.replies:
                open_turns.append((said, result))
        return open_turns


class _AskArgs(ToolArgs):
    expert: str = Field(min_length=1, description="The name of the investigator or helper.")
    question: str = Field(
        max_length=TEXT_LIMIT, min_length=1, description="One precise question: what you need to know and why."
    )


class _AskInvestigatorArgs(_AskArgs):
    expert: str = Field(min_length=1, description="The name of the investigator.")


_KEEPS = (
    "Each keeps its whole conversation: what it read and answered before is still in its context, so a "
    "follow-up costs little and needs no re-reading."
)
_ASK: dict[Kind, tuple[str, type[_AskArgs], str]] = {
    "investigation": (
        f"Ask one of your investigators a question. {_KEEPS} Name it as the investigate result named it.",
        _AskInvestigatorArgs,
        "there are no investigators yet: call investigate first.",
    ),
    "session": (
        f"Ask one of your investigators or helpers a question. {_KEEPS} Name it as its investigate or "
        "spawn_helper result named it.",
        _AskArgs,
        "there are no investigators or helpers yet: call investigate or spawn_helper first.",
    ),
}
"""What `ask_expert` says to the lead of each kind of run: its description, its arguments, and the error
when nobody can be asked yet."""


def lead_ask_tools(asker: str, experts: Experts, kind: Kind) -> Toolset:
    """`ask_expert` for the lead of a run of `kind`: always offered, with one description, as experts come and go.

    A lead's conversation lasts across processes; its requests must offer the same tools each time,
    or its rebuilt calls would not match the log (the roster in a worker's `ask_expert` changes as experts join).
    """
    doc, args, none_yet = _ASK[kind]
    who = "investigator" if kind == "investigation" else "investigator or helper"
    asking = Asking(asker, experts)

    async def ask(parsed: _AskArgs, call: ToolCall) -> ToolOutcome:
        return await asking.answer(parsed.expert, parsed.question, call)

    async def someone(call: ToolCall, run: Run) -> ToolOutcome:
        """Whoever is named must be there, whatever else is wrong with the call."""
        if not len(experts):
            return ToolOutcome(none_yet, is_error=True)
        name = (call.arguments or {}).get("expert")
        if isinstance(name, str) and name and name not in experts:
            known = ", ".join(f"`{n}`" for n in experts.by_name)
            return ToolOutcome(f"there is no {who} `{name}`; yours are: {known}.", is_error=True)
        return await run(call)

    return Toolset([Tool("ask_expert", args, ask, doc)]).wrap(someone)


def read_only(tools: Toolset) -> Toolset:
    """The read-only tools of `tools` (a read-only `Toolbox`) without `finish`: a lead ends turns otherwise."""
    return tools.without({FINISH}, because="you do not finish: call answer to reply.")
