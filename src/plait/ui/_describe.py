"""What each event says, worded once: `describe(event)`, rendered as plain text, rich markup, a rich `Text` or HTML.

The progress lines, the live transcript, `plait log`, `plait show` and the report all take their words from here;
what they add is their own: who is speaking, and the long bodies (a prompt, a command's output) they show in full.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from plait.reconcile.verdict import gate_why
from plait.ui import _fmt

if TYPE_CHECKING:  # told apart by their kind: `plait log` describes events read without the models too
    from rich.text import Text

    from plait.events.types import (
        Decided,
        Event,
        GateChecked,
        Integrated,
        LeaseChanged,
        MergeStep,
        ModelCallFinished,
        ToolReturned,
    )

__all__ = ["Said", "describe", "first_line", "short_args"]

STYLES = {
    "good": "green",
    "warn": "yellow",
    "bad": "red",
    "mark": "bold",
    "note": "magenta",
    "info": "cyan",
    "dim": "dim",
}
"""The rich style of each tone; in HTML a tone is a class."""

Part = tuple[str, str]
"""Some words and their tone ('' for none)."""


@dataclass(frozen=True)
class Said:
    """One event in words: who it is about, its tone, and the words, in parts that may have a tone of their own."""

    who: str
    tone: str
    parts: tuple[Part, ...]

    def head(self) -> Said:
        """Its first part alone: the figures of a model call without its reply."""
        return dataclasses.replace(self, parts=self.parts[:1])

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.parts)

    def markup(self, *, who: bool = True) -> str:
        """Rich console markup, every word escaped; `who` leads the line, unless told not to."""
        from plait.ui._plain import escape

        body = "".join(f"[{STYLES[t]}]{escape(text)}[/]" if t in STYLES else escape(text) for text, t in self.parts)
        body = f"[{STYLES[self.tone]}]{body}[/]" if self.tone in STYLES else body
        return f"[cyan]{escape(self.who)}[/] {body}" if who and self.who else body

    def text(self) -> Text:
        """A rich `Text` in the line's tone, without who (a transcript of one agent)."""
        from rich.text import Text

        line = Text(style=STYLES.get(self.tone, ""))
        for text, tone in self.parts:
            line.append(text, style=STYLES.get(tone, ""))
        return line

    def html(self) -> str:
        """HTML, every word escaped; a part with a tone is a span of that class."""
        from html import escape as html_escape  # the report alone writes HTML

        return "".join(
            f'<span class="{tone}">{html_escape(text)}</span>' if tone else html_escape(text)
            for text, tone in self.parts
        )


def short_args(arguments: dict[str, object] | None, raw: str = "", width: int = 90) -> str:
    """Tool arguments on one line, long values shortened."""
    if arguments is None:
        return f"<malformed JSON: {raw[:40]!r}>"
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        parts.append(f"{key}={text[:40] + '…' if len(text) > 40 else text}")
    line = " ".join(parts)
    return line if len(line) <= width else line[: width - 1] + "…"


def first_line(text: str, width: int = 120) -> str:
    lines = text.strip().splitlines()
    return lines[0][:width] if lines else ""


def _files(files: list[str], shown: int = 4) -> str:
    more = f" and {len(files) - shown} more" if len(files) > shown else ""
    return ", ".join(files[:shown]) + more


def _said(who: str, tone: str, *parts: str | Part) -> Said:
    return Said(who, tone, tuple(p if isinstance(p, tuple) else (p, "") for p in parts))


def describe(event: Event, *, max_attempts: int | None = None) -> Said | None:
    """The event in words, or None for the bookkeeping ones; `max_attempts` says `attempt 2 of 3` when known."""
    who = event.agent or "run"
    if event.kind == "task_started":
        of = f" of {max_attempts}" if max_attempts else ""
        again = f"attempt {event.attempt}{of} " if event.attempt > 1 else ""
        return _said(who, "mark", f"started {again}on branch ", (event.branch, "mark"))
    if event.kind == "prompt":
        return _said(who, "", ("task: ", "mark"), event.user)
    if event.kind == "model_response":
        return _model_call(who, event)
    if event.kind == "model_retry":
        return _said(who, "warn", f"retry {event.attempt} in {event.wait_s:.1f}s: {event.reason}")
    if event.kind == "model_error":
        return _said(who, "bad", f"model call {event.call} failed: {event.error}")
    if event.kind == "tool_call":
        args = short_args(event.call.arguments, event.call.raw_arguments, 110)
        return _said(who, "", ("→ ", "mark"), (event.call.name, "mark"), f" {args}")
    if event.kind == "tool_result":
        return _tool_returned(who, event)
    if event.kind == "agent_stopped":
        tone = "good" if event.reason == "finished" else "bad"
        summary = f" — {_fmt.one_line(event.summary, 200)}" if event.summary.strip() else ""
        spent = f"{event.steps} model calls, {_fmt.usd(event.cost_usd)}"
        return _said(who, "", (f"stopped: {event.reason}", tone), f" after {spent}{summary}")
    if event.kind == "commit":
        files = f": {_files(event.files, 8)}" if event.files else ""
        return _said(who, "good", f"committed {event.sha[:10]} on {event.branch}{files}")
    if event.kind == "task_finished":
        why = (event.summary or event.reason) if event.status == "done" else (event.reason or event.summary)
        tone = "good" if event.status == "done" else "bad"
        return _said(who, "", (event.status, tone), f": {first_line(why, 200)}" if why.strip() else "")
    if event.kind == "lease":
        return _said(who, "", ("lease: ", "mark"), (_lease(event), _LEASE_TONE.get(event.action, "dim")))
    if event.kind in _DECIDED:
        return _decided(who, cast("Decided", event))
    if event.kind == "note":
        return _said(who, "note", f"note ({event.topic}): {event.text}")
    return _run_level(event)


def _model_call(who: str, event: ModelCallFinished) -> Said:
    u = event.response.usage
    cached = f" ({_fmt.tokens(u.cached_tokens)} cached)" if u.cached_tokens else ""
    head = (
        f"#{event.call} {_fmt.tokens(u.input_tokens)}→{_fmt.tokens(u.output_tokens)} tok{cached} "
        f"{_fmt.usd(event.cost_usd)} {event.duration_s:.1f}s"
    )
    thought = _fmt.one_line(event.response.text, 100)
    return _said(who, "", (head, "dim"), *([(" " + thought, "")] if thought else []))


def _tool_returned(who: str, event: ToolReturned) -> Said:
    """An error's first line, or a result's first and last lines."""
    lines = event.output.strip().splitlines()
    if event.is_error:
        return _said(who, "bad", f"✗ {first_line(event.output)}")
    if not lines:
        return _said(who, "dim", "(no output)")
    last = f" … {lines[-1].strip()[:100]}" if len(lines) > 1 else ""
    return _said(who, "dim", f"{lines[0][:120]}{last}")


_DECIDED = frozenset(
    {
        "decision",
        "notes_delivered",
        "compacted",
        "user_said",
        "lead_replied",
        "run_kind",
        "placed",
        "verify",
        "dispatched",
        "opening",
        "carried",
        "debts",
        "agent_session",
        "mcp_tools",
    }
)
"""The kinds of logged choice (a lease aside) worded alike: what was decided, and why."""


def _decided(who: str, event: Decided) -> Said:
    why = f": {first_line(event.reason, 300)}" if event.reason.strip() else ""
    return _said(who, "warn", f"{event.decision}{why}")


_LEASE_TONE = {"claim": "good", "wait": "warn", "refuse": "bad", "cycle": "bad", "update": "info"}


def _lease(event: LeaseChanged) -> str:
    """A claim, wait, refusal, broken cycle, release or merge of integrated work."""
    action, path, holder = event.action, event.path, event.holder
    why = f" ({event.why})" if event.why and action in ("claim", "wait", "refuse") else ""
    if action == "claim" and event.after:
        return f"claimed {path} after waiting for {', '.join(event.after)}{why}"
    if action == "wait":
        return f"waits for {holder} to finish with {path}{why}"
    if action == "refuse":
        waited = event.waited
        return f"refused {path}{why}: held by {holder}" + (f", after waiting {waited:.0f}s" if waited else "")
    if action == "cycle":
        return f"refused {path}: waiting for {holder} would close the cycle {' → '.join(event.cycle)}"
    return event.decision + (why if action == "claim" else "")


def _run_level(event: Event) -> Said | None:
    """The run's start and end, its plan, the merge queue, the gate, the integration branch and the policy."""
    if event.kind == "run_started":
        snapshot = " (snapshot)" if event.snapshot else ""
        return _said(
            "run",
            "",
            (event.run_id, "mark"),
            f" on {event.repo} from {event.base_ref} @ {event.base_commit[:10]}{snapshot}, model {event.model}: ",
            _fmt.one_line(event.task, 200),
        )
    if event.kind == "run_finished":
        tone = {"done": "good", "incomplete": "warn"}.get(event.status, "bad")
        on = f" on {event.branch} @ {event.commit[:10]}" if event.branch else ""
        why = f": {first_line(event.reason, 300)}" if event.reason.strip() else ""
        return _said("run", "", (event.status, tone), f"{on}{why}")
    if event.kind == "plan":
        ids = [t.id for t in event.plan.tasks]
        mode = f", {event.plan.mode}"
        return _said(event.agent or "run", "mark", f"plan ({event.source}{mode}): {len(ids)} task(s): {', '.join(ids)}")
    if event.kind == "plan_rejected":
        return _said(event.agent or "run", "warn", f"plan rejected (attempt {event.attempt}): {event.error}")
    if event.kind == "merge":
        return _merge_step(event)
    if event.kind == "gate":
        return _gate(event)
    if event.kind == "integrated":
        return _integrated(event)
    if event.kind == "policy":
        rule = f" (rule {event.rule})" if event.rule else ""
        tone = "dim" if event.verdict == "allow" else "bad"
        return _said(
            event.agent or "run", "", (f"policy {event.verdict}", tone), f": {event.action} {event.subject[:120]}{rule}"
        )
    return None


def _merge_step(event: MergeStep) -> Said:
    """How a branch merged: git alone, or which rung resolved which file."""
    files = _files(event.files)
    if event.rung == "git" and event.outcome == "clean":
        return _said(event.task, "", ("merged by git, no conflict", "good"), f": {files}" if files else "")
    if event.rung == "git":
        return _said(event.task, "", (f"conflicts in {files}", "warn"), ": the merge ladder takes them")
    if event.outcome == "resolved":
        return _said(event.task, "good", f"merged: {files} resolved by the {event.rung} rung")
    on = f" on {files}" if files else ""
    detail = f": {first_line(event.detail)}" if event.detail.strip() else ""
    return _said(event.task, "", (f"the {event.rung} rung failed{on}", "bad"), detail)


def _gate(event: GateChecked) -> Said:
    """The gate's verdict: on which tasks (or the base), at which commit, and the line that says why."""
    tasks = ", ".join(event.tasks) or "the base"
    why = gate_why(event.stage, event.output, passed=event.passed)
    at = f" {tasks} @ {event.commit[:10]}"
    if not event.passed:
        return _said("gate", "", ("failed", "bad"), f"{at}: the {event.stage} check" + (f": {why}" if why else ""))
    stage = f" ({event.stage} check)" if event.stage != "verify" else ""
    return _said("gate", "", ("passed", "good"), f"{at}{stage}" + (f": {why}" if why and not stage else ""))


def _integrated(event: Integrated) -> Said:
    """Tasks taken onto the integration branch, and those rejected, with why."""
    why = first_line(event.reason, 200)
    if not event.tasks:
        return _said(", ".join(event.ejected), "", ("rejected", "bad"), f": {why}")
    ejected = f"; ejected {', '.join(event.ejected)}: {why}" if event.ejected else ""
    into = f": {event.branch} @ {event.commit[:10]}"
    return _said(", ".join(event.tasks), "", ("integrated", "good"), f"{into}{ejected}")
