"""Steering from the live view: `m` tells the agent under the cursor something, `s` stops it (its task dropped,
or tried again), `o` opens a read-only shell in its worktree. Each does what `plait agent` does.

What `m` and `s` ask for is a `Steering`, handed in by the command that starts the view (`plait.cli._steering`
logs it as `plait agent` does); the shell is `plait agent RUN TASK --shell`'s (`_agent_shell`).
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar, Literal, Protocol

from rich.text import Text
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from plait.errors import PlaitError
from plait.events.store import EventStore
from plait.events.types import Event
from plait.ui._agent_shell import open_shell
from plait.ui.runview import RunView, phase_of

__all__ = ["MessageScreen", "StopScreen", "Steering", "cannot_steer", "shell"]

StopChoice = Literal["drop", "retry"]

MODAL_CSS = """
ModalScreen { align: center middle; }
ModalScreen > Vertical {
    width: 90; height: auto; max-height: 90%; padding: 1 2; border: thick $primary; background: $surface;
}
"""


class Steering(Protocol):
    """What the live view's `m` and `s` keys ask for: a message to one agent of the run, or its stop."""

    def say(self, store: EventStore, view: RunView, agent: str, text: str) -> str:
        """Tell `agent` `text` at its next model call; what follows, said."""
        ...

    def stop(self, store: EventStore, view: RunView, agent: str, *, retry: bool) -> str:
        """Stop `agent` after the step in flight, its task dropped or (`retry`) tried again; what follows, said."""
        ...


def cannot_steer(view: RunView, agent: str) -> str:
    """Why `agent` cannot be steered now (as `plait agent` would refuse), or '' when it can."""
    found = view.agents.get(agent)
    if found is None or phase_of(agent) != "work":
        return f"{agent} is not a task's agent: only a task's agent can be steered"
    if view.ended is not None and view.status != "interrupted":
        return f"task '{agent}' cannot be steered: the run has ended"
    if found.finished or found.state in ("done", "dropped"):
        return f"task '{agent}' cannot be steered: the task is {found.state}"
    return ""


def shell(app: App[Any], view: RunView, events: list[Event], agent: str) -> str:
    """Suspend the view and run `plait agent RUN TASK --shell` for `agent`; a line saying how it went."""
    try:
        with contextlib.ExitStack() as suspended:
            with contextlib.suppress(SuspendNotSupported):  # headless: there is no terminal to hand over
                suspended.enter_context(app.suspend())
            code = open_shell(view.run_id, events, agent)
    except PlaitError as exc:
        return str(exc)
    return f"back from {agent}'s worktree" + (f" (the shell exited {code})" if code else "")


class MessageScreen(ModalScreen[str | None]):
    """An input line for a message to one agent; enter sends it, escape does not."""

    CSS = MODAL_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, agent: str) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"a message to {self.agent}, read at its next model call", style="bold"))
            yield Input(placeholder="what the agent should hear; enter sends it, escape cancels", id="message")

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.dismiss(message.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class StopScreen(ModalScreen[StopChoice | None]):
    """Stopping an agent, confirmed: `d` drops its task, `r` tries it again from its work, escape keeps it."""

    CSS = MODAL_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "choose('drop')", "Stop, drop the task"),
        Binding("r", "choose('retry')", "Stop, try it again"),
        Binding("escape,n", "choose('')", "Cancel"),
    ]

    def __init__(self, agent: str) -> None:
        super().__init__()
        self.agent = agent

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"stop {self.agent} after the step in flight?", style="bold"))
            yield Static("d: stop it and drop its task (the run goes on without it)")
            yield Static("r: stop it and try the task again from its work")
            yield Static("escape: leave it running")

    def action_choose(self, choice: str) -> None:
        self.dismiss("drop" if choice == "drop" else "retry" if choice == "retry" else None)
