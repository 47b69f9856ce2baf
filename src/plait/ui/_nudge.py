"""What the live view does for steering: `p` pauses or resumes the agent under the cursor, and a run's end
rings the terminal's bell (and, where `notify-send` is on PATH, says so on the desktop)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from typing import Any

from textual.app import App

from plait.events.store import EventStore
from plait.events.types import Event, RunFinished, UserSteered
from plait.ui.runview import RunView, phase_of

__all__ = ["ring_at_end", "toggle_pause"]


def toggle_pause(store: EventStore, view: RunView, agent: str) -> str:
    """Pause `agent` before its next model call, or let it go on when paused; returns what was asked, or ''."""
    found = view.agents.get(agent)
    if found is None or found.finished or phase_of(agent) != "work":
        return ""
    action = "resume" if found.state == "paused" else "pause"
    store.append(UserSteered(run_id=view.run_id, agent=agent, action=action))
    return action


def ring_at_end(app: App[Any], fresh: Sequence[Event]) -> None:
    """The bell when the run ends: a view left in another window still tells."""
    ended = next((e for e in fresh if isinstance(e, RunFinished)), None)
    if ended is None:
        return
    app.bell()
    notify = shutil.which("notify-send")
    if notify is not None:
        try:
            subprocess.run([notify, "plait", f"run {ended.run_id}: {ended.status}"], check=False, timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass  # the desktop's word is a nicety: the bell was rung
