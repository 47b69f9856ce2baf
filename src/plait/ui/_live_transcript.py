"""The live view's transcript screen: one agent's steps, following new tool calls as they are logged."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from plait.events.types import Event, MergeStep
from plait.ui._event_lines import transcript_lines

__all__ = ["TranscriptScreen"]


class TranscriptScreen(Screen[None]):
    """One agent's transcript; new events are added by the dashboard as they are read from the log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,backspace,t", "app.pop_screen", "Back"),
        Binding("end", "follow", "Follow"),
    ]

    def __init__(self, agent: str, events: list[Event]) -> None:
        super().__init__()
        self.agent = agent
        self._initial = [e for e in events if self.wants(e)]

    def compose(self) -> ComposeResult:
        yield Static(Text(f"transcript of {self.agent}", style="bold"), id="transcript-title")
        yield RichLog(id="transcript", wrap=True, auto_scroll=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.call_after_refresh(self.add, self._initial)

    def wants(self, event: Event) -> bool:
        return event.agent == self.agent or (isinstance(event, MergeStep) and event.task == self.agent)

    def add(self, events: list[Event]) -> None:
        """Append the events of this agent among `events`."""
        log = self.query_one("#transcript", RichLog)
        for event in events:
            if self.wants(event):
                for line in transcript_lines(event):
                    log.write(line, expand=True)

    def action_follow(self) -> None:
        log = self.query_one("#transcript", RichLog)
        log.auto_scroll = True
        log.scroll_end(animate=False)
