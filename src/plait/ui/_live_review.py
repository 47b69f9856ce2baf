"""The live view's review screen: each task as `plait review RUN` shows it, a diff pane for the task under the
cursor, and the keys that act on the result: `d` marks a task to leave out (or keeps it again), `i` integrates
the rest again (`plait review RUN --drop TASK...`), `a` applies the result (`plait apply RUN`).

Both actions run the command itself, in a subprocess: the same code, the same checks, the same events in the
log; what it says is shown as the outcome. Each asks first.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, RichLog, Static

from plait.errors import PlaitError
from plait.events.runlog import RunLog
from plait.ui._live_steer import MODAL_CSS
from plait.ui._review import Review, TaskReview, review_of
from plait.workspace import Repo

__all__ = ["Confirm", "ReviewScreen"]

_COLUMNS = ("task", "keep", "state", "cost", "merged by", "gate", "files", "vs head")


class Confirm(ModalScreen[bool]):
    """A yes/no question: `y` goes ahead, `n` or escape does not."""

    CSS = MODAL_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, style="bold"))
            yield Static("y: yes · n: no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def _row(task: TaskReview, dropped: bool) -> list[Text]:
    head = "" if not task.commit else ("as its branch" if not task.stat_head else "differs")
    state = task.state + ("" if task.in_result or not task.commit else ", not in result")
    keep = Text("drop", style="bold red") if dropped else Text("keep" if task.in_result else "")
    files = str(len(task.files)) if task.commit else "no commit"
    cells = [task.id, "", state, task.cost, task.merged_by, task.gate, files, head]
    return [keep if i == 1 else Text(c) for i, c in enumerate(cells)]


def _diff_lines(text: str) -> list[Text]:
    styles = {"+": "green", "-": "red", "@": "cyan"}
    return [
        Text(line, style=styles.get(line[:1], "") if not line.startswith(("+++", "---")) else "bold")
        for line in text.splitlines()
    ]


class ReviewScreen(Screen[None]):
    """A run's tasks for review, the selected task's change, and the keys to leave tasks out and apply."""

    CSS = """
    #review-head { height: auto; padding: 0 1; }
    #review-tasks { height: auto; max-height: 12; }
    #review-diff { height: 1fr; border-top: solid $primary; }
    #review-outcome { height: auto; max-height: 8; padding: 0 1; border-top: solid $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,r", "app.pop_screen", "Back"),
        Binding("d", "toggle_drop", "Drop/keep task"),
        Binding("i", "integrate", "Integrate without dropped"),
        Binding("a", "apply", "Apply"),
    ]

    def __init__(self, root: Path, log: RunLog, redact: Callable[[str], str]) -> None:
        super().__init__()
        self.root, self.run_log, self.redact = root, log, redact
        self.review: Review | None = None
        self.dropped: list[str] = []
        self.outcome: list[str] = []
        self.busy = ""
        """What the screen is doing (loading, integrating, applying), or ''."""

    def compose(self) -> ComposeResult:
        yield Static("reading the run's tasks…", id="review-head")
        table: DataTable[Text] = DataTable(id="review-tasks", cursor_type="row")
        yield table
        yield RichLog(id="review-diff", wrap=False, markup=False, auto_scroll=False)
        yield Static(id="review-outcome")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#review-tasks", DataTable)
        for column in _COLUMNS:
            table.add_column(column, key=column)
        self.load()

    @work(exclusive=True, group="review")
    async def load(self) -> None:
        """Read the review again (a worker: git runs for each task) and show it."""
        self.busy = "loading"
        try:
            self.review = await asyncio.to_thread(self._read)
        except PlaitError as exc:
            self.query_one("#review-head", Static).update(Text(f"no review: {exc}", style="red"))
            return
        finally:
            self.busy = ""
        self.dropped = [t for t in self.dropped if t in {x.id for x in self.review.tasks}]
        self._show()

    def _read(self) -> Review:
        return review_of(Repo.discover(self.root), self.run_log, patches=True)

    def _show(self) -> None:
        seen = self.review
        assert seen is not None
        where = f"{seen.branch} @ {seen.head[:10]}" if seen.head else "no result"
        head = Text.assemble(
            (f"run {seen.run_id}", "bold"), f" · {seen.status} · {seen.cost} · base {seen.base[:10]} → {where}"
        )
        self.query_one("#review-head", Static).update(head)
        table = self.query_one("#review-tasks", DataTable)
        cursor = table.cursor_row
        table.clear()
        for task in seen.tasks:
            table.add_row(*_row(task, task.id in self.dropped), key=task.id)
        table.move_cursor(row=cursor)
        self._show_task()
        self.query_one("#review-outcome", Static).update(Text("\n".join(self.outcome[-8:])))

    def selected(self) -> TaskReview | None:
        if self.review is None or not self.review.tasks:
            return None
        row = self.query_one("#review-tasks", DataTable).cursor_row
        return self.review.tasks[min(max(row, 0), len(self.review.tasks) - 1)]

    def on_data_table_row_highlighted(self, _: DataTable.RowHighlighted) -> None:
        self._show_task()

    def _show_task(self) -> None:
        log = self.query_one("#review-diff", RichLog)
        log.clear()
        task = self.selected()
        if task is None:
            return
        log.write(Text.assemble((task.id, "bold"), f" {task.title}"))
        for line in task.summary.strip().splitlines():
            log.write(Text(f"  {self.redact(line)}"))
        if not task.commit:
            log.write(Text("  no commit"))
            return
        log.write(Text(f"against the base ({task.since[:10]}..{task.commit[:10]}):", style="bold"))
        log.write(Text(task.stat_base))
        if task.stat_head:
            head = self.review.head[:10] if self.review else ""
            log.write(Text(f"against the head ({task.commit[:10]}..{head}, its files):", style="bold"))
            log.write(Text(task.stat_head))
        else:
            log.write(Text("against the head: its files are as on its branch"))
        for text in _diff_lines(self.redact(task.diff_base)):
            log.write(text)
        if task.diff_head:
            log.write(Text("the head differs in its files:", style="bold"))
            for text in _diff_lines(self.redact(task.diff_head)):
                log.write(text)
        log.scroll_home(animate=False)

    def action_toggle_drop(self) -> None:
        task = self.selected()
        if task is None or self.review is None:
            return
        if task.id in self.dropped:
            self.dropped.remove(task.id)
        elif task.in_result:
            self.dropped.append(task.id)
        else:
            self.notify(f"{task.id} is not in the result: there is nothing to leave out")
            return
        self._show()

    def action_integrate(self) -> None:
        if self.busy:
            self.notify(f"wait: {self.busy}…")
            return
        if not self.dropped:
            self.notify("mark a task to leave out with d first")
            return
        question = f"integrate the run again without {', '.join(self.dropped)} (and what depends on them)?"
        args = ["review", self.run_log.run_id, *(x for t in self.dropped for x in ("--drop", t)), "--json"]
        self.app.push_screen(Confirm(question), lambda yes: self._go(args, "integrating") if yes else None)

    def action_apply(self) -> None:
        if self.busy:
            self.notify(f"wait: {self.busy}…")
            return
        if self.dropped:
            self.notify(f"{', '.join(self.dropped)} marked to leave out: integrate again (i) first, or keep them (d)")
            return
        question = f"apply run {self.run_log.run_id}'s result to your current branch in {self.root}?"
        self.app.push_screen(
            Confirm(question), lambda yes: self._go(["apply", self.run_log.run_id], "applying") if yes else None
        )

    def _go(self, args: list[str], doing: str) -> None:
        self.busy = doing
        self.outcome.append(f"{doing}: plait {' '.join(args)}")
        self._show()
        self.run_command(args)

    @work(exclusive=True, group="act")
    async def run_command(self, args: list[str]) -> None:
        """Run `plait ARGS` on the run's repository and show what it said; then read the review again."""
        code: int | None = 1
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "plait",
                *args,
                "-C",
                str(self.root),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await proc.communicate()
            code = proc.returncode
        except OSError as exc:
            self.outcome.append(f"cannot start plait: {exc.strerror}")
        else:
            self.outcome += _said(args, out.decode(errors="replace"), err.decode(errors="replace"), code)
        self.busy = ""
        if self.dropped and args[0] == "review":
            self.dropped = []
        self.notify(self.outcome[-1], severity="information" if code == 0 else "error")
        self.load()


def _said(args: list[str], out: str, err: str, code: int | None) -> list[str]:
    """What a command said, as lines: a drop's outcome from its JSON, else its own lines; errors last."""
    lines = [line for line in err.splitlines() if line.strip()]
    if args[0] == "review" and out.strip():
        try:
            data = json.loads(out)
        except ValueError:
            data = {}
        lines += [f"dropped {t}: {why}" for t, why in data.get("dropped", {}).items()]
        lines += [f"ejected {e['task']}: {e['reason']}" for e in data.get("ejected", [])]
        if data.get("head"):
            lines.append(f"new result: {data.get('branch')} @ {str(data['head'])[:10]}; apply it with a")
    else:
        lines += [line for line in out.splitlines() if line.strip()]
    if code and not lines:
        lines.append(f"plait {args[0]} failed (exit {code})")
    return lines
