"""`plait ask`: a question fanned out to read-only investigators, one per area, combined by a lead.

    question ─► lead ─► investigate(areas) ─► investigators, in parallel ─► findings on the board
                 ▲                                                             │
                 └──────────── findings, with file:line references ◄───────────┘
                 └─► answer(answer, disagreements)

An investigation is a run in the log like any other (`plait runs`, `show`, `cost` list it). Each
investigator is an expert (origin `investigation`) reading a detached checkout of the run's commit;
it stays available: a follow-up question (`plait ask --follow-up RUN`) goes to the same lead, rebuilt
from the log, which asks the investigators with `ask_expert`. What they read is still in their
context, and nothing the earlier questions cost is paid again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from plait.agent.arguments import TEXT_LIMIT, ToolArgs
from plait.agent.budget import Budget, Limits
from plait.agent.tools import Toolbox
from plait.agent.toolset import Tool, ToolOutcome, Toolset
from plait.coord.answering import Answer, answer_arguments
from plait.coord.board import Board
from plait.coord.experts import Expert, Experts, ExpertSpec, expert_id
from plait.errors import UsageError
from plait.events.runlog import RunLog
from plait.events.types import ExpertStarted, NotePosted, QuestionAnswered, QuestionAsked, RunFinished
from plait.messages import ToolCall
from plait.models.pricing import PriceTable
from plait.plan.repomap import tracked_files
from plait.plan_model import Plan, PlanTask
from plait.run._areas import MOST_AREAS, Area, Finding, locate, references, split_areas
from plait.run._lead import (
    LEAD,
    ExpertMaker,
    Transcript,
    close_checkout,
    lead_agent,
    lead_ask_tools,
    mark_kind,
    open_checkout,
    read_only,
    rebuild_experts,
    run_kind,
    started,
)
from plait.run.base import RunBase, record_start
from plait.run.context import RunContext
from plait.run.state import charge_earlier_spending
from plait.workspace import LocalShell

__all__ = ["Area", "AskOutcome", "Finding", "Inquiry", "Investigation", "ask", "investigate_tools", "split_areas"]


class _InvestigateArgs(ToolArgs):
    """Send read-only investigators into the code, one per area, all at the same time.

    Each reads its area and reports findings with file:line references; you get every report back. The
    investigators stay available afterwards: ask them follow-ups with ask_expert. With no areas, plait
    splits the repository by directory.
    """

    question: str = Field(max_length=TEXT_LIMIT, min_length=1, description="The question being investigated, in full.")
    areas: list[Area] = Field([], description="The areas, each with a name, its paths and its own question.")


_AREA_NOTE = "\n\nYour area: "
"""Where the investigator's question ends and plait's note on how to answer it begins."""


def _ask_text(area: Area, question: str) -> str:
    where = ", ".join(area.paths) or "the whole repository"
    return (
        f"{area.question.strip() or question.strip()}{_AREA_NOTE}{where}. Start from it; read outside it when "
        "the question needs it, and say so. You change nothing. Answer with `answer`: your finding, with "
        "file:line references for every claim; `references`, every path:line or path:start-end it rests on "
        "(paths from the repository root); and `not_checked`, what you did not check."
    )


def _brief(question: str) -> str:
    """An investigator's brief: the question under investigation, which its own area's part comes from."""
    text = question.strip()
    text = text if len(text) <= 1500 else text[:1500] + "..."
    quoted = "\n".join("> " + line for line in text.splitlines())
    return (
        "You are one of the investigators of a question about this repository, each looking into one area. "
        f"The question under investigation, for context:\n{quoted}"
    )


@dataclass
class Investigation:
    """The investigators of one run, each an expert kept for follow-ups, reporting on the run's board."""

    maker: ExpertMaker
    experts: Experts
    concurrency: int = 4
    files: list[str] = field(default_factory=list)

    async def run(self, question: str, areas: Sequence[Area], asker: str, key: str) -> list[Finding]:
        """Ask every area's investigator its question, at most `concurrency` at a time; findings in area order."""
        files = self.files = self.files or tracked_files(self.maker.root)
        areas = list(areas) or split_areas(files, question, max(self.concurrency, MOST_AREAS))
        chosen = [(area, self._investigator(area, question)) for area in areas]
        limit = asyncio.Semaphore(self.concurrency)
        board = Board(self.maker.log, _plan(areas, question))

        async def one(area: Area, expert: Expert) -> Finding:
            async with limit:
                answer = await expert.ask(asker, _ask_text(area, question), key=f"{key}:{expert.spec.name}")
            finding = _finding(area.question or question, expert.spec.area, answer, files, str(self.maker.root))
            self._post(board, expert, finding)
            return finding

        try:
            async with asyncio.TaskGroup() as group:
                running = [group.create_task(one(area, expert), name=expert.id) for area, expert in chosen]
        except ExceptionGroup as failed:  # an investigator failing for good (not just stopping) ends them all
            raise failed.exceptions[0] from None
        return [task.result() for task in running]

    def _investigator(self, area: Area, question: str) -> Expert:
        """The area's investigator: the one of that name when its area is the same, else a new one."""
        name, n = area.name, 2
        while name in self.experts and list(self.experts.by_name[name].spec.area) != list(area.paths):
            name, n = f"{area.name[:36]}-{n}", n + 1
        if name in self.experts:
            return self.experts.by_name[name]
        spec = ExpertSpec(name=name, area=list(area.paths), brief=_brief(question))
        return self.experts.add(self.maker.expert(spec, "investigation"))

    def _post(self, board: Board, expert: Expert, finding: Finding) -> None:
        """Put the finding on the board, once: a call done again after a crash finds it there."""
        if not finding.ok:
            return
        posted = self.maker.log.events(agent=expert.id, kinds=["note"])
        if any(isinstance(e, NotePosted) and e.text == finding.text for e in posted):
            return
        board.post(expert.id, "finding", finding.text, list(finding.paths or finding.area))


def _plan(areas: Sequence[Area], question: str) -> Plan:
    """The areas as a plan, for the board: each investigator is a task reading its area."""
    title = question.strip().splitlines()[0][:68] if question.strip() else "investigation"
    tasks = [PlanTask(id=a.name, title=title, instructions=a.question or question, reads=a.paths) for a in areas]
    return Plan(mode="parallel", reason="one investigator per area", tasks=tasks)


def _finding(question: str, area: Sequence[str], answer: Answer, files: Sequence[str], root: str) -> Finding:
    """The finding of `answer`: its references (those it gave, else those in its text) checked against `files`."""
    area = tuple(area)
    refs = list(answer.references) or (references(answer.text) if answer.ok else [])
    located = locate(refs, files, area, root)
    return Finding(
        answer.expert,
        question,
        answer.text,
        answer.ok,
        area,
        located.refs,
        answer.reads,
        answer.not_checked.strip(),
        located.unclear,
        located.paths,
    )


def render_findings(findings: Sequence[Finding]) -> str:
    """The investigators' reports, as the lead reads them."""
    parts = [f"{len(findings)} investigator(s) reported; ask any of them follow-ups with ask_expert.\n"]
    for f in findings:
        where = ", ".join(f.area) or "the whole repository"
        state = "" if f.ok else " (it could not finish)"
        text = f"## `{f.investigator}` on {where}{state}\nQuestion: {f.question}\n\n{f.text.strip()}\n"
        if f.refs:
            text += "References: " + ", ".join(f.refs) + "\n"
        if f.unclear:
            text += "Unclear references: " + "; ".join(f.unclear) + "\n"
        if f.not_checked:
            text += f"Not checked: {f.not_checked}\n"
        parts.append(text)
    return "\n".join(parts)


def investigate_tools(investigation: Investigation, asker: str = LEAD) -> Toolset:
    """`investigate`, which fans a question out to the investigation's investigators."""

    async def investigate(args: _InvestigateArgs, call: ToolCall) -> ToolOutcome:
        names = [a.name for a in args.areas]
        if len(set(names)) != len(names):
            return ToolOutcome("two areas have the same name: give each its own.", format_error=True)
        findings = await investigation.run(args.question, args.areas, asker, f"{asker}:{call.id}")
        return ToolOutcome(render_findings(findings), is_error=not any(f.ok for f in findings))

    return Toolset([Tool("investigate", _InvestigateArgs, investigate)])


class _AnswerArgs(ToolArgs):
    """Give the combined answer to the question you were asked. It ends your turn; you keep your context."""

    answer: str = Field(
        max_length=TEXT_LIMIT, min_length=1, description="One answer combining the findings, with file:line references."
    )
    disagreements: str = Field(
        "",
        max_length=TEXT_LIMIT,
        description="Where the investigators contradicted each other or their findings do not fit, naming them "
        "and what each said; 'none' when they agree.",
    )


async def _answered(args: _AnswerArgs, call: ToolCall) -> ToolOutcome:
    return ToolOutcome("answered.", finished=True, summary=args.answer)


_SYSTEM = """\
You lead an investigation of a question about a repository. Nobody changes code here: you find out.

Split the question by the areas of the code it spans (the database queries, the API layer, the front
end...) and call `investigate` once, with one area per part: a short name, the paths (globs) it
covers, and the precise question for that area. Each area gets a read-only investigator that reads
the code and reports findings with file:line references; they work at the same time. Call investigate
with no areas to have the repository split by directory. Read code yourself only to settle a point.

Then call `answer`: one combined answer with file:line references, and `disagreements`, saying where
the investigators contradicted each other or their findings do not fit together ('none' when they
agree). For a follow-up question, your investigators are still there with everything they read: ask
them with ask_expert rather than investigating again. Every reply must call a tool.
"""


def _message(turn: int, question: str) -> str:
    if turn == 1:
        return f"The question:\n\n{question.strip()}"
    return f"A follow-up question:\n\n{question.strip()}\n\n(Your investigators are still available: ask_expert.)"


@dataclass
class Inquiry(RunContext):
    """A question to investigate: a new run from `base`, or a follow-up in the run of `log`."""

    question: str
    base: RunBase | None = None
    """The commit a new investigation reads; None for a follow-up, which reads its run's commit."""


@dataclass
class AskOutcome:
    run_id: str
    question: str
    answer: str
    disagreements: str
    findings: list[Finding]
    ok: bool
    turn: int
    since: int = 0
    """The sequence number of the question in the log: what came after it is this turn's."""

    def as_json(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "question": self.question,
            "answer": self.answer,
            "disagreements": self.disagreements,
            "findings": [f.as_json() for f in self.findings],
            "ok": self.ok,
            "turn": self.turn,
        }


def findings_since(log: RunLog, after: int, files: Sequence[str], root: str = "") -> list[Finding]:
    """Every answer to the lead logged after sequence number `after`, in the order they were answered.

    References are checked against `files`, the tracked files of the checkout at `root`.
    """
    areas = {e.agent: tuple(e.area) for e in log.events(kinds=["expert"]) if isinstance(e, ExpertStarted)}
    asked: dict[tuple[str, int], str] = {}
    found = []
    for event in log.events(kinds=["question", "answer"], after=after):
        if isinstance(event, QuestionAsked):
            asked[(event.agent, event.number)] = event.question.split(_AREA_NOTE)[0]
        elif isinstance(event, QuestionAnswered) and event.asker == LEAD:
            name = event.agent.removeprefix(expert_id(""))
            question = asked.get((event.agent, event.number), "")
            found.append(_finding(question, areas.get(event.agent, ()), Answer.logged(name, event), files, root))
    return found


async def ask(o: Inquiry) -> AskOutcome:
    """Investigate `o.question` in a new run (with `o.base`) or as a follow-up in the run of `o.log`."""
    s, log = o.settings, o.log
    if o.base is not None:
        record_start(log, o.repo, o.question, o.base, o.model.name, s)
        mark_kind(log, "investigation")
        commit = o.base.commit
    else:
        begun = started(log)
        if begun is None or run_kind(log) != "investigation":
            raise UsageError(f"run {log.run_id} is not an investigation: follow up on a run made by `plait ask`")
        commit = begun.base_commit
    root = open_checkout(o.repo, log.run_id, commit, "investigation")
    try:
        return await _investigate(o, root, commit)
    except asyncio.CancelledError:
        log.append(RunFinished(run_id=log.run_id, status="interrupted", reason="stopped by the user"))
        raise
    finally:
        close_checkout(o.repo, root)


async def _investigate(o: Inquiry, root: Path, commit: str) -> AskOutcome:
    s, log = o.settings, o.log
    budget = Budget("run", Limits(tokens=s.run_max_tokens, usd=s.run_max_usd), log)
    if o.base is None:
        charge_earlier_spending(budget, log)
    files = tracked_files(root)
    maker = ExpertMaker(log, o.model, PriceTable(s.prices), root, commit, s, budget)
    experts = Experts()
    await rebuild_experts(maker, experts)
    investigation = Investigation(maker, experts, concurrency=s.concurrency, files=files)
    tools = (
        read_only(Toolbox(root, LocalShell(), read_only=True))
        | investigate_tools(investigation)
        | lead_ask_tools(LEAD, experts, "investigation")
        | Toolset([Tool("answer", _AnswerArgs, _answered)])
    )
    lead = lead_agent(maker, tools, _SYSTEM, files)
    transcript = Transcript(log, "question")
    try:
        for said, result in await transcript.replay(lead):  # a question in flight when a process died
            extra = answer_arguments(log, LEAD, said.seq)
            transcript.replied(said.turn, result, disagreements=str(extra.get("disagreements", "")))
        said = transcript.said(_message(len(transcript.messages) + 1, o.question))
        result = await lead.turn(said.text)
    finally:
        await experts.close()  # an investigator still at work (the lead was stopped) stops too
    disagreements = str(answer_arguments(log, LEAD, said.seq).get("disagreements", "")) if result.ok else ""
    reply = transcript.replied(said.turn, result, disagreements=disagreements)
    status = "done" if result.ok else "failed"
    log.append(RunFinished(run_id=log.run_id, status=status, reason="" if result.ok else reply.text))
    return AskOutcome(
        log.run_id,
        o.question,
        reply.text,
        disagreements,
        findings_since(log, said.seq, files, str(root)),
        result.ok,
        said.turn,
        said.seq,
    )
