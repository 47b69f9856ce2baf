"""`plait ask` and `plait session`: questions to read-only investigators, and a lead agent to talk with."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import sys
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import typer
from rich.table import Table

from plait.cli._options import JsonOpt, RepoOpt
from plait.cli._starting import sandboxed_runners
from plait.errors import StateError, UsageError
from plait.events.lease import lease_for
from plait.events.runlog import RunLog
from plait.events.store import EventStore, ObservedStore
from plait.events.types import (
    RunStarted,
)
from plait.messages import Model
from plait.models.registry import make_model
from plait.run.base import RunBase, choose_base, new_run_id
from plait.run.context import ShellFactory
from plait.run.investigate import Inquiry, ask
from plait.run.session import Reply, Session, SessionConfig, latest_session, run_kind
from plait.run.state import load_state
from plait.settings import Settings, load_settings, run_settings
from plait.ui._common import err, open_store, out, resolve_run, run_store
from plait.ui._safe import escaped
from plait.ui._session_output import Progress, Spent, priced, print_answer, show_reply, spent_since
from plait.workspace import Repo

__all__ = ["ask_command", "session_command"]

T = TypeVar("T")

ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="openai:NAME, anthropic:NAME, openai-compatible:NAME@URL, …")
]
MaxUsdOpt = Annotated[float | None, typer.Option("--max-usd", help="Dollars it may spend.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")]

_COMMANDS = {
    "/helpers": "the helpers and investigators, and how many questions each answered",
    "/runs": "the runs dispatched from this session",
    "/cost": "what the session (and its dispatched runs) spent so far",
    "/quit": "leave; `plait session --resume` continues later",
}


class _RenewedLease:
    """A run's lease, renewed from a thread so that waiting for the user's input does not let it go stale."""

    def __init__(self, store: ObservedStore, run_id: str, what: str) -> None:
        self.lease = lease_for(store, run_id)
        try:
            note = self.lease.acquire()
        except StateError as exc:
            self.lease.release()
            raise StateError(f"{what} {run_id} is open in another plait process: leave it there first") from exc
        if note:
            err.print(f"[yellow]note:[/] {note}")
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._run, name="plait-lease", daemon=True)
        self._beat.start()

    def _run(self) -> None:
        while not self._stop.wait(5):
            self.lease.beat()

    def release(self) -> None:
        self._stop.set()
        self._beat.join()
        self.lease.release()


@contextlib.contextmanager
def _holding_lease(store: ObservedStore, run_id: str, what: str) -> Iterator[None]:
    """Hold the lease of run `run_id` (a `what`: session, run, investigation) for the block, renewed from a thread."""
    held = _RenewedLease(store, run_id, what)
    try:
        yield
    finally:
        held.release()


def _recorded(repo: Repo, begun: RunStarted, flags: dict[str, Any], model: str | None) -> tuple[Settings, Model]:
    """The settings a run was started with (today's keys, its values, then flags), and its model."""
    settings = run_settings(repo.root, begun.settings, flags)
    return settings, make_model(model or begun.model, settings)


def _until_done(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, T]) -> T:
    """Run `work` on `loop`; on Ctrl-C cancel it, let it log that, and raise KeyboardInterrupt."""
    task = loop.create_task(work)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
        raise


def _read_line(tty: bool) -> str | None:
    """The user's next line, None at the end of input."""
    if tty:
        try:
            return input("› ")
        except EOFError:
            return None
    line = sys.stdin.readline()
    return None if line == "" else line


def _command(line: str, sess: Session) -> bool:
    """Carry out a /command; False when it ends the session."""
    name = line.split()[0].lower()
    if name in ("/quit", "/exit", "/q"):
        return False
    if name == "/helpers":
        table = Table("name", "kind", "area", "questions")
        for h in sess.helpers():
            kind = {"session": "helper", "investigation": "investigator"}.get(h.origin, h.origin)
            table.add_row(escaped(h.name), escaped(kind), escaped(", ".join(h.area) or "all"), str(h.questions))
        out.print(table if table.row_count else "no helpers or investigators yet")
    elif name == "/runs":
        runs = list(sess.dispatched().values())
        shown = "\n".join(f"{r}  (plait show {r})" for r in runs) if runs else "no runs dispatched yet"
        out.print(shown, markup=False, highlight=False)
    elif name == "/cost":
        usd, calls = sess.cost()
        spent = Spent(calls, usd if priced(sess.cfg.settings, sess.cfg.model) else None)
        out.print(f"{spent.text()} (dispatched runs included)", highlight=False)
    else:
        for command, what in _COMMANDS.items():
            out.print(f"{command:<9} {what}")
    out.file.flush()
    return True


def _converse(loop: asyncio.AbstractEventLoop, sess: Session) -> None:
    tty = sys.stdin.isatty()
    while True:
        line = _read_line(tty)
        if line is None:
            return
        text = line.strip()
        if not text:
            continue
        if text.startswith("/"):
            if not _command(text, sess):
                return
            continue
        _shown(sess, _until_done(loop, sess.say(text)))


def _shown(sess: Session, reply: Reply) -> None:
    """Print the lead's reply with what the message cost, dispatched runs included."""
    has_price = priced(sess.cfg.settings, sess.cfg.model)
    spent = [Spent(calls, usd if has_price else None) for usd, calls in (sess.cost(reply.since), sess.cost())]
    show_reply(reply, *spent)


def _find(store: EventStore, ref: str | None, kind: str) -> str:
    """The run `ref` names (the latest of its kind when None), which must be of `kind`."""
    if ref is None:
        found = latest_session(store) if kind == "session" else None
        if found is None:
            raise UsageError(f"no {kind} to resume in this repository: start one with `plait {kind}`")
        return found
    run_id = resolve_run(store, ref, acts_on=lambda r: run_kind(RunLog(store, r)) == kind, what=kind)
    if run_kind(RunLog(store, run_id)) != kind:
        made = "`plait session`" if kind == "session" else "`plait ask`"
        raise UsageError(f"run {run_id} is not a{'n' if kind[0] in 'aeiou' else ''} {kind}: give one made by {made}")
    return run_id


Prepared = tuple[ObservedStore, str, Settings, Model, RunBase | None]


def _prepare(repo: Repo, flags: dict[str, Any], model: str | None, *, kind: str, again: str | None) -> Prepared:
    """The log, run id, settings, model and base of a new run (`again` None), or of run `again` of `kind`.

    A new run's model is made before anything is written, so a missing key leaves no trace.
    """
    if again is None:
        settings = load_settings(repo.root, {**flags, "model": model}).settings
        llm = make_model(settings.model, settings)
        base = choose_base(repo, include_uncommitted=settings.include_uncommitted)
        return run_store(open_store(repo, create=True), settings), new_run_id(), settings, llm, base
    inner = open_store(repo, create=False)
    run_id = _find(inner, again or None, kind)
    begun = load_state(RunLog(inner, run_id)).started
    if begun is None:
        raise StateError(f"run {run_id} has no start in the log: it cannot be continued")
    settings, llm = _recorded(repo, begun, flags, model)
    return run_store(inner, settings), run_id, settings, llm, None


def ask_command(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="The question; `-` reads it from stdin.")],
    follow_up: Annotated[
        str | None,
        typer.Option("--follow-up", "--run", metavar="RUN", help="Ask the lead and investigators of RUN again."),
    ] = None,
    model: ModelOpt = None,
    concurrency: Annotated[int | None, typer.Option(help="Investigators at work at the same time.")] = None,
    max_usd: MaxUsdOpt = None,
    include_uncommitted: Annotated[
        bool | None, typer.Option("--include-uncommitted", help="Read a snapshot of uncommitted changes too.")
    ] = None,
    repo_path: RepoOpt = Path(),
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Ask read-only investigators, one per area of the code; get one answer.

    A lead splits QUESTION by area (the database queries, the API, the
    front end...). Each area's investigator reads its code and reports
    findings with file:line references; the lead combines them and says
    where the investigators disagreed. Nothing is changed.

    The investigators stay available: a follow-up goes to them with what
    they have read, and nothing already paid for is paid again.

    [bold]Examples[/]

      plait ask "Why is checkout slow?"

      plait ask --follow-up RUN "Would an index on orders.user_id help?"

      plait ask "Where are sessions stored?" --json | jq -r .answer
    """
    if question == "-":
        question = sys.stdin.read()
    if not question.strip():
        raise UsageError("the question is empty: say what you want to find out")
    repo = Repo.discover(repo_path)
    flags = {"concurrency": concurrency, "run_max_usd": max_usd, "include_uncommitted": include_uncommitted}
    store, run_id, settings, llm, base = _prepare(repo, flags, model, kind="investigation", again=follow_up)
    inner = store.inner
    if base is not None and base.left_out and not quiet:
        err.print(
            f"[yellow]note:[/] {len(base.left_out)} uncommitted change(s) are not read: the investigators "
            "read the last commit (--include-uncommitted reads them too)"
        )
    if not quiet:
        store.listeners.append(Progress(err, run_id))
    inquiry = Inquiry(repo, settings, llm, RunLog(store, run_id), question, base)
    loop = asyncio.new_event_loop()
    try:
        with _holding_lease(store, run_id, "investigation"):
            outcome = _until_done(loop, ask(inquiry))
    except KeyboardInterrupt:
        err.print(f"[yellow]interrupted[/]: nothing is lost; `plait ask --follow-up {run_id} ...` goes on")
        raise typer.Exit(130) from None
    finally:
        loop.close()
    has_price = priced(settings, llm)
    asked = RunLog(inner, run_id)
    turn, total = spent_since(asked, has_price, outcome.since), spent_since(asked, has_price)
    if as_json:
        spent = {
            "model_calls": turn.calls,
            "cost_usd": None if turn.usd is None else round(turn.usd, 6),
            "total_model_calls": total.calls,
            "total_cost_usd": None if total.usd is None else round(total.usd, 6),
            "priced": has_price,
        }
        out.print_json(json.dumps({**outcome.as_json(), **spent}), ensure_ascii=True)
    else:
        print_answer(outcome, turn, total)
    store.close()
    raise typer.Exit(0 if outcome.ok else 1)


def session_command(
    session_ref: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="With --resume: the session (default: the latest).")
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue a session with its helpers.")] = False,
    model: ModelOpt = None,
    max_usd: MaxUsdOpt = None,
    repo_path: RepoOpt = Path(),
    quiet: QuietOpt = False,
) -> None:
    """Talk with a lead agent that keeps helpers and dispatches changes.

    Each line you type is one message. The lead answers directly, fans
    questions out to read-only investigators, spawns helpers that own an
    area and keep their context all session, and dispatches changes as
    plait runs of their own: planned, run in parallel, merged and tested,
    on a branch of their own (your checkout is not touched).

    Commands: /helpers, /runs, /cost, /quit. Lines are read from stdin
    when it is not a terminal. Everything is logged: after /quit, Ctrl-C
    or a crash, --resume brings back the lead and its helpers without
    paying again for what they did.

    [bold]Examples[/]

      plait session

      plait session --resume

      plait session --resume 20250101-120000-ab12 -m anthropic:claude-sonnet-4-5
    """
    if session_ref is not None and not resume:
        raise UsageError(f"to continue session {session_ref}, use `plait session --resume {session_ref}`")
    repo = Repo.discover(repo_path)
    again = (session_ref or "") if resume else None
    store, run_id, settings, llm, base = _prepare(repo, {"run_max_usd": max_usd}, model, kind="session", again=again)
    if not quiet:
        store.listeners.append(Progress(err, run_id))
    extra = str(Path(sys.executable).parent) if llm.name.startswith("scripted:") else ""
    bound: list[Any] = []

    def runners(dispatched: RunLog) -> ShellFactory:
        if not bound:  # the sandbox is probed on the first dispatch only
            bound.append(sandboxed_runners(settings, repo, extra_path=extra, quiet=True))
        factory: ShellFactory = bound[0](dispatched)
        return factory

    hold = functools.partial(_holding_lease, store, what="run")
    sess = Session(SessionConfig(repo, settings, llm, RunLog(store, run_id), runners, base, hold))
    loop = asyncio.new_event_loop()
    status: Literal["done", "interrupted"] | None = None
    try:
        with _holding_lease(store, run_id, "session"):
            try:
                for reply in _until_done(loop, sess.open()):
                    _shown(sess, reply)
                helpers = len(sess.helpers())
                what = f"resumed at message {sess.turns + 1}, {helpers} helper(s)" if resume else "started"
                err.print(f"session {run_id} {what}; /help lists the commands, /quit leaves", soft_wrap=True)
                _converse(loop, sess)
                status = "done"
            except KeyboardInterrupt:
                status = "interrupted"
                gone_on = f"`plait session --resume {run_id}` goes on"
                err.print(f"[yellow]interrupted[/]: nothing is lost; {gone_on}", soft_wrap=True)
            finally:
                loop.run_until_complete(sess.close(status))
    finally:
        loop.close()
        store.close()
    if status == "interrupted":
        raise typer.Exit(130)
    err.print(f"session {run_id} saved: `plait session --resume {run_id}` continues it", soft_wrap=True)
