"""The reply an agent's model is streaming, in memory: the live view of the same process shows its tail.

It sits beside the log, below the run that writes it and the view that reads it.

    model stream ─► ModelCallJournal.complete(on_text=…) ─► CHANNEL[(run, agent)] ─► Dashboard.poll ─► "writing: …"

Nothing here is logged (the log has the whole reply once the call's `model_response` is appended, and then the
agent clears its tail). Only a view in the process that runs the agents sees it; `plait status` elsewhere does not.
The channel is the one mutable object of this process that the agents and the view share: they are made apart
(the view is given the run as a coroutine), and what passes is a display hint, dropped when the call ends.
"""

from __future__ import annotations

import threading

__all__ = ["CHANNEL", "Arriving", "Channel"]

_KEEP = 200
"""The characters kept of a reply's end: the view shows fewer."""


class Channel:
    """The tail of each streaming reply, by (run, agent); thread-safe, since a model may stream in a thread."""

    def __init__(self) -> None:
        self._tails: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def arriving(self, run_id: str, agent: str) -> Arriving:
        """The hook an agent's model calls stream their text into."""
        return Arriving(self, (run_id, agent))

    def tail(self, run_id: str, agent: str) -> str:
        """The end of the reply `agent` is receiving now ('' when none is streaming)."""
        with self._lock:
            return self._tails.get((run_id, agent), "")

    def _add(self, key: tuple[str, str], piece: str) -> None:
        with self._lock:
            self._tails[key] = (self._tails.get(key, "") + piece)[-_KEEP:]

    def _clear(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._tails.pop(key, None)


class Arriving:
    """One agent's hook: called with each piece of the reply's text (a `TextHook`), cleared when the call ends."""

    def __init__(self, channel: Channel, key: tuple[str, str]) -> None:
        self._channel, self._key = channel, key

    def __call__(self, piece: str) -> None:
        self._channel._add(self._key, piece)

    def clear(self) -> None:
        self._channel._clear(self._key)


CHANNEL = Channel()
"""This process's channel: the agents of `plait run` write to it, its live view reads it."""
