"""The live view: a dashboard of every agent of a run, read from the event log as it grows.

It only reads the log (`store.events(run, after=last_seq)` on a timer), so the same view follows a run
driven by this process (`run_with_dashboard`) or by another one (`plait status`). `q` closes the view and
never stops a run: a run of this process goes on printing plain progress lines; ctrl+c stops it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.pilot import Pilot
from textual.widgets import DataTable, Footer, Static

from plait.events.arriving import CHANNEL, Channel
from plait.events.runlog import RunLog
from plait.events.types import Event
from plait.redact import Redactor
from plait.ui import _fmt
from plait.ui._common import err
from plait.ui._live_review import ReviewScreen
from plait.ui._live_rows import COLUMNS, cells, lease_lines, shown, widths
from plait.ui._live_steer import MessageScreen, Steering, StopChoice, StopScreen, cannot_steer, shell
from plait.ui._live_transcript import TranscriptScreen
from plait.ui._nudge import ring_at_end, toggle_pause
from plait.ui._placement import placements
from plait.ui.feed import EventFeed
from plait.ui.progress import ProgressPrinter
from plait.ui.runview import AgentView, RunView

__all__ = ["Dashboard", "run_with_dashboard"]

T = TypeVar("T")
AutoPilot = Callable[[Pilot[object]], Coroutine[Any, Any, None]] | None


def end_lines(view: RunView) -> list[str]:
    """Once the run has ended: what the gate said of its result, and the command to run next."""
    if view.ended is None:
        return []
    if not view.gates:
        gate = "gate: not run"
    else:
        last = [g for g in view.gates if g.commit == view.gates[-1].commit]
        gate = ("gate passed" if all(g.passed for g in last) else "gate failed") + _fmt.gate_line(view)[4:]
    run = view.run_id
    if view.status in ("done", "incomplete") and view.commit:
        then = f"next: `plait review {run}` to look at it, `plait apply {run}` to take it"
    elif view.status == "interrupted":
        then = f"next: `plait resume {run}` continues it"
    else:
        then = f"next: `plait show {run}` says what went wrong"
    return [f"{view.status}: {gate}", then]


_BOARD_ACTIONS = frozenset({"transcript", "pause", "message", "stop", "shell", "review"})


class Dashboard(App[None]):
    """One row per agent (task, state, tool call in flight, steps, tokens, money), the plan, merges and gate."""

    TITLE = "plait"
    CSS = """
    #summary { height: auto; padding: 0 1; }
    #agents { height: auto; max-height: 1fr; }
    #merges { height: auto; max-height: 9; padding: 0 1; border-top: solid $primary; }
    #transcript-title { padding: 0 1; background: $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "transcript", "Transcript", key_display="enter/t"),
        Binding("q", "quit_view", "Quit (the run goes on)"),
        Binding("p", "pause", "Pause/resume"),
        Binding("m", "message", "Message"),
        Binding("s", "stop", "Stop"),
        Binding("o", "shell", "Shell"),
        Binding("r", "review", "Review"),
        Binding("ctrl+c", "interrupt", "Stop the run", show=False, priority=True),
    ]

    def __init__(
        self,
        feed: EventFeed,
        *,
        log_getter: Callable[[], RunLog | None] | None = None,
        poll_s: float = 0.25,
        clock: Callable[[], float] = time.time,
        console: Console = err,
        arriving: Channel = CHANNEL,
        steering: Steering | None = None,
    ) -> None:
        super().__init__()
        self.steering = steering
        """What `m` and `s` ask for, done; without it the view does not offer them."""
        self.arriving = arriving
        """The replies streaming in to this process's agents: a running agent's row shows the end of its own."""
        self._tails: dict[str, str] = {}
        self.feed = feed
        self.log_getter = log_getter
        self.work: asyncio.Future[Any] | None = None
        self.poll_s = poll_s
        self.clock = clock
        self.view: RunView | None = None
        self.events: list[Event] = []
        self.placed: dict[str, tuple[str, str]] = {}
        """The node each agent's attempt runs on, when a backend placed it elsewhere."""
        self._rows: list[str] = []
        self.console = console
        """Where the run's progress goes on as plain lines after `q` closed the view, and its last words."""
        self.detached = False

    def compose(self) -> ComposeResult:
        yield Static(id="summary")
        table: DataTable[Text] = DataTable(id="agents", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(id="merges")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The keys for the agent under the cursor act (and show) on the board alone, not over another screen."""
        if action in ("message", "stop") and self.steering is None:
            return False
        return action not in _BOARD_ACTIONS or len(self.screen_stack) == 1

    def on_mount(self) -> None:
        self.poll()
        self.set_interval(self.poll_s, self.poll)
        self.set_interval(1.0, self._tick)
        if self.work is not None:
            self.run_worker(self._await_work(self.work), exit_on_error=False)

    async def _await_work(self, work: asyncio.Future[Any]) -> None:
        await asyncio.wait([work])
        self.poll()
        if not isinstance(self.screen, ReviewScreen):
            self.exit()  # else the result is under review: `q` closes the view

    def poll(self) -> int:
        """Read the events appended since the last poll and show them; returns how many there were."""
        if self.feed.log is None and self.log_getter is not None:
            self.feed.log = self.log_getter()
        fresh = self.feed.poll()
        watched = self.view is not None and self.view.ended is None and self.view.last_seq > 0
        if self.feed.log is not None and self.view is None:
            self.view = RunView(self.feed.log.run_id)
            self.sub_title = f"run {self.feed.log.run_id}"
        if fresh and self.view is not None:
            self.events.extend(fresh)
            self.placed.update(placements(fresh))
            self.view.apply(fresh)
            self._arrived(self.view)
            self._show()
            ring_at_end(self, fresh)
            if watched and self.view.ended is not None and self._reviewable():
                self.open_review()  # the run ended while watched, with a result to look at
            if isinstance(self.screen, TranscriptScreen):
                self.screen.add(fresh)
        elif self.view is None:
            self.query_one("#summary", Static).update("waiting for the run to start…")
        if self.view is not None and self._arrived(self.view) and not fresh:
            self._show()
        return len(fresh)

    def _arrived(self, view: RunView) -> bool:
        """Read the end of each running agent's streaming reply; whether any changed since the last poll."""
        running = [a.id for a in view.agents.values() if a.state == "running"]
        tails = {a: t for a in running if (t := self.arriving.tail(view.run_id, a))}
        changed, self._tails = tails != self._tails, tails
        return changed

    async def run_work(self, work: Awaitable[T], *, headless: bool = False, auto_pilot: AutoPilot = None) -> T:
        """Run the view while `work` runs, and return what it returned (see `run_with_dashboard`)."""
        task: asyncio.Future[T] = asyncio.ensure_future(work)
        self.work = task
        try:
            await self.run_async(headless=headless, auto_pilot=auto_pilot)
            if self.detached and not task.done():
                await self._follow_plainly(task)
            elif self.view is not None:
                for line in end_lines(self.view):
                    self.console.print(line, markup=False, highlight=False)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])
        if task.cancelled():
            raise KeyboardInterrupt
        return task.result()

    async def _follow_plainly(self, work: asyncio.Future[Any]) -> None:
        """After `q`: the run goes on in this process, its steps printed as plain lines until it ends."""
        log = self.feed.log
        where = f"; `plait status {log.run_id}` in another terminal shows it live" if log else ""
        self.console.print(f"the live view is closed and the run goes on here{where}; ctrl+c stops it", markup=False)
        printer = ProgressPrinter(self.console)
        while True:
            for event in self.feed.poll():
                printer(event)
            if work.done():
                return
            await asyncio.wait([work], timeout=self.poll_s)

    def on_resize(self) -> None:
        if self.view is not None:
            self._show()

    def _tick(self) -> None:
        if self.view is not None and self.view.ended is None:
            self._show_summary(self.view)

    def _show(self) -> None:
        view = self.view
        assert view is not None
        self._show_summary(view)
        self._show_rows([a for a in view.agents.values() if shown(a, view)])
        lines = [f"merge {m.task}: {m.rung} {m.outcome} {', '.join(m.files[:3])}" for m in view.merges[-4:]]
        lines += [_fmt.gate_line(view), _fmt.integration_line(view), *lease_lines(view)]
        if self.placed:
            lines.append("on: " + " · ".join(f"{a} {host}" for a, (_, host) in sorted(self.placed.items())))
        lines += [f"decision by {d.agent or 'run'}: {d.decision}" for d in view.decisions[-2:]]
        self.query_one("#merges", Static).update(Text("\n".join(_fmt.one_line(x, 200) for x in lines)))

    def _show_rows(self, agents: list[AgentView]) -> None:
        """A row per agent, the title and the tool call cut (the title's column dropped) to fit the screen."""
        table = self.query_one("#agents", DataTable)
        title_w, now_w = widths(agents, self.size.width, self._tails)
        columns = [c for c in COLUMNS if title_w or c != "task"]
        if [c.value for c in table.columns] != columns:
            cursor = table.cursor_row
            table.clear(columns=True)
            self._rows = []
            for column in columns:
                table.add_column(column, key=column)
            table.move_cursor(row=cursor)
        for agent in agents:
            row = cells(agent, title_w, now_w, self._tails.get(agent.id, ""))
            if agent.id not in self._rows:
                self._rows.append(agent.id)
                table.add_row(*row, key=agent.id)
                continue
            for column, value in zip(columns, row, strict=True):
                table.update_cell(agent.id, column, value, update_width=True)

    def _show_summary(self, view: RunView) -> None:
        now = self.clock()
        head = Text.assemble(
            (f"run {view.run_id}", "bold"),
            f" · {view.status_text(now)} · {_fmt.duration(view.elapsed_s(now))} · {len(view.agents)} agents · ",
            f"{view.model_calls} model calls · {view.tool_calls} tool calls · ",
            f"{_fmt.tokens(view.usage.total_tokens)} tokens · {view.cost_text}",
        )
        task = Text("task: ", style="bold") + Text(_fmt.one_line(view.task, 150))
        plan = Text(_fmt.plan_line(view))
        ended = [Text(line, style="bold") for line in end_lines(view)]
        self.query_one("#summary", Static).update(Text("\n").join([head, task, plan, *ended]))

    @property
    def agent_ids(self) -> list[str]:
        """The agents shown, one row each, in the order they appeared."""
        return list(self._rows)

    def selected_agent(self) -> str | None:
        table = self.query_one("#agents", DataTable)
        if not self._rows or len(self.screen_stack) > 1:
            return None  # another screen is over the board
        return self._rows[min(max(table.cursor_row, 0), len(self._rows) - 1)]

    def open_transcript(self, agent: str) -> TranscriptScreen:
        """Show `agent`'s transcript; it follows the agent's new steps until closed."""
        screen = TranscriptScreen(agent, self.events)
        self.push_screen(screen)
        return screen

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        if message.row_key.value is not None:
            self.open_transcript(message.row_key.value)

    def action_transcript(self) -> None:
        agent = self.selected_agent()
        if agent is not None:
            self.open_transcript(agent)

    def action_pause(self) -> None:
        """Pause the agent under the cursor before its next model call, or let a paused one go on."""
        agent = self.selected_agent()
        if self.feed.log is not None and self.view is not None and agent is not None:
            toggle_pause(self.feed.log.store, self.view, agent)

    def _steerable(self) -> str | None:
        """The agent under the cursor when it can be steered; else None, and the view says why."""
        agent = self.selected_agent()
        if agent is None or self.view is None:
            return None
        why = cannot_steer(self.view, agent)
        if why:
            self.notify(why, severity="warning")
            return None
        return agent

    def action_message(self) -> None:
        """Ask for a message to the agent under the cursor; it reads it at its next model call."""
        agent = self._steerable()
        if agent is not None:
            self.push_screen(MessageScreen(agent), lambda text: self._steer(agent, "say", text or ""))

    def action_stop(self) -> None:
        """Stop the agent under the cursor, once confirmed: its task dropped, or tried again."""
        agent = self._steerable()
        if agent is not None:
            self.push_screen(StopScreen(agent), lambda choice: self._stop(agent, choice))

    def _stop(self, agent: str, choice: StopChoice | None) -> None:
        if choice is not None:
            self._steer(agent, "stop", retry=choice == "retry")

    def _steer(self, agent: str, action: Literal["say", "stop"], text: str = "", retry: bool = False) -> None:
        if self.feed.log is None or self.view is None or self.steering is None or (action == "say" and not text):
            return
        store, view = self.feed.log.store, self.view
        said = (
            self.steering.say(store, view, agent, text)
            if action == "say"
            else self.steering.stop(store, view, agent, retry=retry)
        )
        self.notify(said)

    def action_shell(self) -> None:
        """A shell in the worktree of the agent under the cursor (read-only while it runs), as `plait agent --shell`."""
        agent = self.selected_agent()
        if agent is not None and self.feed.log is not None and self.view is not None:
            self.notify(shell(self, self.view, self.feed.log.events(), agent))

    def _reviewable(self) -> bool:
        """Whether the run's repository is on this machine, to review the run's tasks in."""
        return self.view is not None and bool(self.view.repo) and Path(self.view.repo).is_dir()

    def open_review(self) -> ReviewScreen | None:
        """Show the run's tasks for review (see `ReviewScreen`); None when its repository is not here."""
        if self.feed.log is None or self.view is None or isinstance(self.screen, ReviewScreen):
            return None
        if not self._reviewable():
            self.notify(
                f"run {self.view.run_id}'s repository {self.view.repo} is not on this machine", severity="warning"
            )
            return None
        screen = ReviewScreen(Path(self.view.repo), self.feed.log, self.feed.redact)
        self.push_screen(screen)
        return screen

    def action_review(self) -> None:
        if len(self.screen_stack) == 1:
            self.open_review()

    def action_quit_view(self) -> None:
        """Close the view; a run of this process goes on, printing plain progress lines (see `run_work`)."""
        self.detached = self.work is not None and not self.work.done()
        self.exit()

    def action_interrupt(self) -> None:
        if self.work is not None and not self.work.done():
            self.notify("stopping the agents…")
            self.work.cancel()
            return
        self.exit()


async def run_with_dashboard(
    work: Awaitable[T],
    log_getter: Callable[[], RunLog | None],
    *,
    redact: Redactor | None = None,
    steering: Steering | None = None,
    headless: bool = False,
) -> T:
    """Run `work` (a whole run) under the live view in this terminal; the view closes when the work ends.

    Args:
        work: The run; it appends its events to the run's log.
        log_getter: Returns the run's log, which the view reads, once the run has one (None before).
        redact: Hides secrets in what is shown (the environment's secrets by default).
        steering: What the `m` and `s` keys ask for, done (without it they are not offered).
        headless: Draw nothing (for tests).

    Returns:
        What `work` returned. Raises what it raised; ctrl+c in the view cancels it and raises KeyboardInterrupt.
        `q` closes the view and the run goes on, its steps printed as plain lines on stderr; at the end the gate's
        verdict and the next command are printed there too.
    """
    app = Dashboard(EventFeed(None, redact), log_getter=log_getter, steering=steering)
    return await app.run_work(work, headless=headless)
