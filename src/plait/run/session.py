"""`plait session`: a lead agent the user talks with, its persistent helpers, and changes dispatched as runs.

Each message of the user is logged, then becomes one turn of the lead (`Agent.turn`), which ends when
the lead calls `answer` with its reply. The lead reads the code (read-only), fans questions out to
investigators (`investigate`), keeps helpers that own an area (`spawn_helper`, then `ask_expert`), and
hands changes to plait's pipeline (`dispatch`): plan, parallel agents, merge queue and gate, as a run
of its own whose id the session's log records (`plait show RUN` works on it).

A session is a run in the log. `plait session --resume` rebuilds its lead and every helper from the
log (their model calls are read back, none paid again) and goes on with the next message.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from plait.agent.arguments import TEXT_LIMIT, ToolArgs, argument_problems
from plait.agent.budget import Budget, Limits
from plait.agent.loop import Agent, AgentResult
from plait.agent.tools import Toolbox
from plait.agent.toolset import Tool, ToolOutcome, Toolset
from plait.coord.experts import Experts, ExpertSpec
from plait.errors import PlaitError, UsageError
from plait.events.runlog import RunLog
from plait.events.store import EventStore
from plait.events.types import GateChecked, ModelCallFinished, RunDispatched, RunFinished, TaskFinished
from plait.messages import ToolCall
from plait.models.pricing import PriceTable
from plait.plan.repomap import tracked_files
from plait.reconcile.verdict import gate_why
from plait.run._lead import (
    LEAD,
    ExpertMaker,
    Transcript,
    UserTurn,
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
from plait.run.base import RunBase, choose_base, new_run_id, record_start
from plait.run.context import RunContext, ShellFactoryForRun
from plait.run.investigate import Investigation, investigate_tools
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.state import charge_earlier_spending, load_state
from plait.workspace import GitError, LocalShell, Repo

__all__ = ["Helper", "Reply", "Session", "SessionConfig", "ShellFactoryForRun", "latest_session", "run_kind"]

TASK = "plait session"


def latest_session(store: EventStore) -> str | None:
    """The id of the newest session in the log."""
    return next((r for r in reversed(store.run_ids()) if run_kind(RunLog(store, r)) == "session"), None)


@dataclass
class SessionConfig(RunContext):
    """A session to start (with `base`) or to continue (the `log` of one, no base)."""

    runners: ShellFactoryForRun
    """Given a dispatched run's log, the factory of its agents' shells."""
    base: RunBase | None = None
    hold: Callable[[str], AbstractContextManager[object]] | None = None
    """Holds a dispatched run's lease while the session drives it, so no other process drives it too."""


@dataclass(frozen=True)
class Reply:
    turn: int
    text: str
    ok: bool
    since: int = 0
    """The sequence number of the user's message in the log: what came after it is this turn's."""


@dataclass(frozen=True)
class Helper:
    name: str
    origin: str
    area: tuple[str, ...]
    questions: int


class _SpawnArgs(ToolArgs):
    """Make a persistent helper: an agent that owns an area of the code, reads it when asked, and keeps
    everything it read and answered for the whole session (and after --resume). Ask it with ask_expert."""

    name: str = Field(min_length=1, max_length=40, description="A short id such as 'storage' or 'api'.")
    area: list[str] = Field([], description="Globs of the files it owns, such as 'src/db/**'.")
    brief: str = Field("", max_length=TEXT_LIMIT, description="What it knows about and answers for, in a sentence.")


class _DispatchArgs(ToolArgs):
    """Make a change to the code as a plait run of its own: planned (one agent, or parallel tasks when it
    splits), each agent in its own worktree, merged and tested. Returns the run id, its branch, the files it
    changed (with the diff when short) and the test status; the user's checkout is not touched. It takes
    minutes: dispatch when the user asks for a change."""

    task: str = Field(
        max_length=TEXT_LIMIT, min_length=1, description="The change to make, as complete as a task for `plait run`."
    )
    plan_file: str | None = Field(
        None, description="A plan (YAML) to follow instead of planning, if the user gave one."
    )


class _ReplyArgs(ToolArgs):
    """Reply to the user. It ends your turn; you keep your context, and your helpers keep theirs."""

    answer: str = Field(
        max_length=TEXT_LIMIT,
        min_length=1,
        description="What you tell the user, with file:line references where useful.",
    )


_SYSTEM = """\
You are the lead of an interactive plait session: a software engineer talks with you about a repository.
Each of their messages is one turn; end every turn by calling `answer` with your reply.

- Answer directly when you can; read the code (read_file, search, list_files; read-only) to be exact.
- For a question that spans several areas, `investigate` fans it out to read-only investigators, one per
  area, working at the same time; combine their findings and say where they disagree.
- `spawn_helper` makes a helper that owns an area and keeps its context for the whole session; consult
  helpers and investigators with `ask_expert` instead of reading the same code again.
- For a change to the code, `dispatch` runs it as a plait run of its own (planned, run by one agent or by
  parallel agents in worktrees of their own, merged and tested) and tells you its branch, the files it changed
  and the test status. Tell the user.
You, your investigators and your helpers read the code as of the commit the session started from: a change
you dispatch is on a branch of its own, not in what you read, until the user applies it.
Every reply must call a tool.
"""


def _session_tools(session: Session) -> Toolset:
    """`spawn_helper`, `dispatch` and `answer` of a session's lead."""

    async def spawn(args: _SpawnArgs, call: ToolCall) -> ToolOutcome:
        return session.spawn(call, args)

    async def dispatch(args: _DispatchArgs, call: ToolCall) -> ToolOutcome:
        return await session.dispatch(args.task, args.plan_file, key=session.call_key(call))

    async def reply(args: _ReplyArgs, call: ToolCall) -> ToolOutcome:
        return ToolOutcome("replied.", finished=True, summary=args.answer)

    return Toolset(
        [
            Tool("spawn_helper", _SpawnArgs, spawn),
            Tool("dispatch", _DispatchArgs, dispatch),
            Tool("answer", _ReplyArgs, reply),
        ]
    )


class Session:
    """One session: its lead, its helpers and investigators, and the runs it dispatched."""

    def __init__(self, cfg: SessionConfig) -> None:
        self.cfg = cfg
        self.log = cfg.log
        self.experts = Experts()
        self.transcript = Transcript(cfg.log, "session")
        self._root: Path | None = None
        self._lead: Agent | None = None
        self._maker: ExpertMaker | None = None

    async def open(self) -> list[Reply]:
        """Start the session, or rebuild it from the log; returns the replies to turns a crash left open."""
        cfg, s, log = self.cfg, self.cfg.settings, self.log
        if cfg.base is not None:
            record_start(log, cfg.repo, TASK, cfg.base, cfg.model.name, s)
            mark_kind(log, "session")
            commit = cfg.base.commit
        else:
            begun = started(log)
            if begun is None or run_kind(log) != "session":
                raise UsageError(f"run {log.run_id} is not a session: `plait session --resume` continues sessions")
            commit = begun.base_commit
        root = self._root = open_checkout(cfg.repo, log.run_id, commit, "session")
        budget = Budget("run", Limits(tokens=s.run_max_tokens, usd=s.run_max_usd), log)
        if cfg.base is None:
            charge_earlier_spending(budget, log)
        files = tracked_files(root)
        maker = self._maker = ExpertMaker(log, cfg.model, PriceTable(s.prices), root, commit, s, budget)
        await rebuild_experts(maker, self.experts)
        investigation = Investigation(maker, self.experts, concurrency=s.concurrency, files=files)
        tools = (
            read_only(Toolbox(root, LocalShell(), read_only=True))
            | investigate_tools(investigation)
            | lead_ask_tools(LEAD, self.experts, "session")
            | _session_tools(self)
        )
        self._lead = lead_agent(maker, tools, _SYSTEM, files)
        return [self._reply(said, result) for said, result in await self.transcript.replay(self._lead)]

    async def say(self, text: str) -> Reply:
        """One turn: the user's message is logged, the lead works on it, its reply is logged and returned."""
        assert self._lead is not None, "open the session first"
        said = self.transcript.said(text)
        return self._reply(said, await self._lead.turn(text))

    def _reply(self, said: UserTurn, result: AgentResult) -> Reply:
        reply = self.transcript.replied(said.turn, result)
        return Reply(said.turn, reply.text, result.ok, said.seq)

    @property
    def turns(self) -> int:
        return len(self.transcript.messages)

    def helpers(self) -> list[Helper]:
        return [Helper(e.spec.name, e.origin, tuple(e.spec.area), e.questions) for e in self.experts.by_name.values()]

    def dispatched(self) -> dict[str, str]:
        """The runs this session dispatched: {key of the lead's call: run id}, in order."""
        found: dict[str, str] = {}
        for event in self.log.events(agent=LEAD, kinds=["dispatched"]):
            if isinstance(event, RunDispatched):
                found.setdefault(event.key, event.run)
        return found

    def cost(self, after: int = 0) -> tuple[float, int]:
        """Dollars and model calls of the session and the runs it dispatched, logged after sequence number `after`."""
        usd, calls = 0.0, 0
        for run_id in (self.log.run_id, *self.dispatched().values()):
            for event in self.log.store.events(run_id, kinds=["model_response"], after=after):
                if isinstance(event, ModelCallFinished):
                    usd, calls = usd + event.cost_usd, calls + 1
        return usd, calls

    async def close(self, status: Literal["done", "failed", "interrupted"] | None = "done", reason: str = "") -> None:
        """End this process's part of the session (None: say nothing in the log); `--resume` continues it."""
        await self.experts.close()
        if status is not None:
            self.log.append(RunFinished(run_id=self.log.run_id, status=status, reason=reason))
        if self._root is not None:
            close_checkout(self.cfg.repo, self._root)
            self._root = None

    def call_key(self, call: ToolCall) -> str:
        """Names one tool call of the lead for good: the same call, done again after a crash, has the same key."""
        assert self._lead is not None
        return f"{self._lead.steps}:{call.id}"

    def spawn(self, call: ToolCall, args: _SpawnArgs) -> ToolOutcome:
        assert self._maker is not None
        try:
            spec = ExpertSpec(name=args.name, area=args.area, brief=args.brief)
        except ValidationError as exc:
            return ToolOutcome(argument_problems(call.name, exc), format_error=True)
        known = self.experts.by_name.get(spec.name)
        if known is None:
            self.experts.add(self._maker.expert(spec, "session"))
        elif (list(known.spec.area), known.spec.brief) != (spec.area, spec.brief):  # the same call done again is fine
            return ToolOutcome(f"there is already a helper `{spec.name}`: ask it, or pick another name.", is_error=True)
        area = ", ".join(spec.area) or "the whole repository"
        return ToolOutcome(f"helper `{spec.name}` is ready; it owns {area}. Ask it with ask_expert.")

    async def dispatch(self, task: str, plan_file: str | None, *, key: str) -> ToolOutcome:
        """Run a change through plait's pipeline as its own run; a call done again after a crash resumes it."""
        cfg = self.cfg
        run_id = self.dispatched().get(key)
        state = load_state(RunLog(self.log.store, run_id)) if run_id else None
        if state is not None and state.finished is not None and not state.unfinished:
            return ToolOutcome(describe_run(RunLog(self.log.store, state.run_id), cfg.repo))
        plan = (cfg.repo.root / plan_file) if plan_file else None
        if plan is not None and not plan.is_file():
            return ToolOutcome(f"there is no plan file {plan_file} in the repository.", is_error=True)
        if state is not None and state.started is not None:
            s = state.started
            base = RunBase(s.base_commit, s.base_ref, snapshot=s.snapshot)
        else:
            state = None
            base = choose_base(cfg.repo, include_uncommitted=cfg.settings.include_uncommitted)
            if run_id is None:
                run_id = new_run_id()
                self.log.append(
                    RunDispatched(
                        run_id=self.log.run_id,
                        agent=LEAD,
                        decision=f"dispatched run {run_id}",
                        run=run_id,
                        task=task,
                        plan_file=plan_file or "",
                        key=key,
                    )
                )
        assert run_id is not None
        dispatched = RunLog(self.log.store, run_id)
        work = Orchestration(
            repo=cfg.repo,
            task=task,
            settings=cfg.settings,
            model=cfg.model,
            log=dispatched,
            base=base,
            runners=cfg.runners(dispatched),
            plan_file=plan,
            state=state,
        )
        try:
            with cfg.hold(run_id) if cfg.hold is not None else nullcontext():
                await orchestrate(work)
        except PlaitError as exc:
            return ToolOutcome(f"run {run_id} failed: {exc}", is_error=True)
        return ToolOutcome(describe_run(dispatched, cfg.repo))


_DIFF_CHARS = 6000
"""The longest diff a dispatched run's result shows the lead in full; a longer one is shown as its files."""


def describe_run(log: RunLog, repo: Repo) -> str:
    """A dispatched run's result for the lead: status, tasks, the files it changed (and its diff, when short), tests."""
    run_id, begun = log.run_id, started(log)
    finished: RunFinished | None = None
    tasks: dict[str, TaskFinished] = {}
    checks: dict[str, GateChecked] = {}
    for event in log.events(kinds=["run_finished", "task_finished", "gate"]):
        if isinstance(event, RunFinished):
            finished = event
        elif isinstance(event, TaskFinished):
            tasks[event.agent] = event
        elif isinstance(event, GateChecked) and event.stage == "verify":
            checks[event.commit] = event
    if finished is None:
        return f"run {run_id} did not finish"
    lines = [f"run {run_id}: {finished.status}" + (f" ({finished.reason})" if finished.reason else "")]
    for task, done in tasks.items():
        said = (done.summary or done.reason).strip().replace("\n", " ")
        lines.append(f"task {task}: {done.status}" + (f": {said}" if said else ""))
    if finished.commit and begun is not None and finished.commit != begun.base_commit:
        lines.append(f"result: branch {finished.branch} @ {finished.commit[:10]}")
        lines.extend(_change(repo, begun.base_commit, finished.commit))
    verify = checks.get(finished.commit)
    if verify is None or verify.output.startswith("skipped"):
        lines.append("tests: not run by plait (no test command was configured or found)")
    else:
        head = verify.output.strip().splitlines()
        command = head[0].removeprefix("$ ") if head else ""
        why = gate_why("verify", verify.output, passed=verify.passed)
        lines.append(f"tests: {'passed' if verify.passed else 'failed'}: {command}" + (f" ({why})" if why else ""))
    lines.append(
        "Your read tools and your helpers still read the code as of the session's start: this change is not in it "
        "until the user applies it."
    )
    lines.append(f"details: plait show {run_id}; into the user's branch: plait apply {run_id}")
    return "\n".join(lines)


def _change(repo: Repo, base: str, commit: str) -> list[str]:
    """The files a run changed, with lines added and removed, and its diff when it is short."""
    try:
        numstat = repo.git("diff", "--numstat", base, commit)
        diff = repo.git("diff", base, commit)
    except GitError as exc:
        return [f"the change: git diff {base[:10]} {commit[:10]} ({exc})"]
    files = []
    for row in numstat.splitlines():
        added, removed, path = row.split("\t", 2)
        files.append(f"{path} (+{added} -{removed})" if added != "-" else f"{path} (binary)")
    lines = ["files changed: " + (", ".join(files) or "none")]
    if len(diff) <= _DIFF_CHARS:
        lines.append(f"the diff:\n{diff.rstrip()}")
    else:
        lines.append(
            f"the diff is {len(diff.splitlines())} lines, too long to show: the user sees it with "
            f"`git diff {base[:10]} {commit[:10]}`"
        )
    return lines
