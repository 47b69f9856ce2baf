"""What `plait ask` and `plait session` print: progress lines, answers with their findings, replies, spending."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from plait.events.runlog import RunLog
from plait.events.types import (
    EXPERT_PREFIX,
    Event,
    ModelCallFinished,
    NotePosted,
    QuestionAnswered,
    QuestionAsked,
    ToolCalled,
)
from plait.messages import Model
from plait.models.pricing import PriceTable
from plait.run.investigate import AskOutcome
from plait.run.session import Reply
from plait.settings import Settings
from plait.ui._common import err, out
from plait.ui._safe import escaped, safe_event, visible
from plait.ui.progress import ProgressPrinter, short_args

__all__ = ["Progress", "Spent", "print_answer", "priced", "show_reply", "spent_since"]


class Progress:
    """Progress lines on stderr: what the lead and its experts do, and every step of a dispatched run."""

    def __init__(self, console: Console, run_id: str) -> None:
        self.console, self.run_id = console, run_id
        self.dispatched = ProgressPrinter(console)

    def __call__(self, event: Event) -> None:
        if event.run_id != self.run_id:
            self.dispatched(event)
            return
        event = safe_event(event)
        who = f"[cyan]{escape(event.agent.removeprefix(EXPERT_PREFIX))}[/]"
        if isinstance(event, ToolCalled) and event.call.name not in ("answer", "ask_expert"):
            args = short_args(event.call.arguments, event.call.raw_arguments)
            self.console.print(f"{who} [dim]{escape(event.call.name)} {escape(args)}[/]", soft_wrap=True)
        elif isinstance(event, QuestionAsked):
            first = event.question.strip().splitlines()[0] if event.question.strip() else ""
            self.console.print(f"{who} [dim]asked by {escape(event.asker)}: {escape(first[:100])}[/]", soft_wrap=True)
        elif isinstance(event, QuestionAnswered):
            memory = "from memory" if event.reads == 0 else f"after {event.reads} read/search call(s)"
            self.console.print(f"{who} [dim]answered {memory}[/]", soft_wrap=True)
        elif isinstance(event, NotePosted) and event.topic == "finding":
            paths = escape(", ".join(event.paths) or "its area")
            self.console.print(f"{who} [dim]posted a finding about {paths}[/]", soft_wrap=True)


@dataclass(frozen=True)
class Spent:
    """Model calls and dollars; dollars are None when the model has no price."""

    calls: int
    usd: float | None

    def text(self) -> str:
        cost = "cost unknown (the model has no price)" if self.usd is None else f"${self.usd:.4f}"
        return f"{self.calls} model call{'' if self.calls == 1 else 's'}, {cost}"


def spent_since(log: RunLog, priced: bool, after: int = 0) -> Spent:
    """What the run's model calls logged after sequence number `after` cost."""
    found = [e for e in log.events(kinds=["model_response"], after=after) if isinstance(e, ModelCallFinished)]
    return Spent(len(found), sum(e.cost_usd for e in found) if priced else None)


def priced(settings: Settings, model: Model) -> bool:
    return PriceTable(settings.prices).price(model.name) is not None


def print_answer(outcome: AskOutcome, turn: Spent, total: Spent) -> None:
    _print_text(outcome.answer)
    if outcome.disagreements.strip():
        out.print("\n[bold]Where the investigators disagreed[/]")
        out.print(escaped(outcome.disagreements.strip()), highlight=False)
    if outcome.findings:
        out.print("\n[bold]Findings[/]")
    for f in outcome.findings:
        where = ", ".join(f.area) or "the whole repository"
        state = "" if f.ok else " [red](did not finish)[/]"
        out.print(f"[cyan]{escaped(f.investigator)}[/] on {escaped(where)}{state}")
        for line in f.text.strip().splitlines():
            out.print("  " + escaped(line), highlight=False)
        if f.refs:
            out.print("  [dim]references:[/] " + escaped(", ".join(f.refs)), highlight=False)
        if f.unclear:
            out.print("  [yellow]unclear references:[/] " + escaped("; ".join(f.unclear)), highlight=False)
        if f.not_checked and f.not_checked.lower() not in ("nothing", "none", "nothing."):
            out.print("  [dim]not checked:[/] " + escaped(f.not_checked), highlight=False)
    spent = turn.text() + (f" (the run so far: {total.text()})" if outcome.turn > 1 else "")
    out.print(f"\n[dim]run {outcome.run_id} · {escaped(spent)}[/]")
    out.print(f"[dim]follow up: plait ask --follow-up {outcome.run_id} QUESTION[/]")


def _print_text(text: str) -> None:
    """A model's answer: Markdown in a terminal, its links shown as addresses (never live links), as is elsewhere."""
    if out.is_terminal:
        out.print(Markdown(visible(text), hyperlinks=False))
    else:
        out.print(visible(text), markup=False, highlight=False)


def show_reply(reply: Reply, turn: Spent | None = None, total: Spent | None = None) -> None:
    """The lead's reply, and what the message cost (`turn`), with the session so far (`total`) after the first."""
    _print_text(reply.text)
    if not reply.ok:
        err.print("[yellow]the lead did not finish its turn; say how to go on[/]")
    if turn is not None:
        so_far = f" (the session so far: {total.text()})" if total is not None and reply.turn > 1 else ""
        out.print(f"[dim]{escaped(turn.text() + so_far)}[/]", highlight=False)
    out.file.flush()
