"""The user's word to one agent of a run, logged as the run logs it (redacted, with the run's settings): what
`plait agent --say/--pause/--resume/--stop` writes, and the live view's `m` and `s` keys through `LoggedSteering`.

The run loop's side of it is `plait.run.steer`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plait.events.store import EventStore
    from plait.run.steer import Action
    from plait.ui.runview import RunView

__all__ = ["LoggedSteering", "steer_logged"]


def steer_logged(
    store: EventStore,
    repo_root: Path | None,
    run_id: str,
    task: str,
    action: Action,
    *,
    text: str = "",
    retry: bool = False,
) -> str:
    """Log the user's word to `task`'s agent, redacted with the settings of the repository at `repo_root`; what
    follows, said."""
    # imported here: `plait status` hands the live view its steering, and read without a terminal it never steers
    from plait.events.runlog import RunLog
    from plait.run.steer import steer
    from plait.settings import load_settings
    from plait.ui._common import run_store

    settings = load_settings(repo_root, report=None).settings if repo_root is not None else None
    return steer(RunLog(run_store(store, settings), run_id), task, action, text=text, retry=retry)


class LoggedSteering:
    """The live view's steering (`plait.ui._live_steer.Steering`): each word logged as `plait agent` logs it."""

    def say(self, store: EventStore, view: RunView, agent: str, text: str) -> str:
        """Tell `agent` `text` at its next model call; what follows, said."""
        return steer_logged(store, _repo_root(view), view.run_id, agent, "say", text=text)

    def stop(self, store: EventStore, view: RunView, agent: str, *, retry: bool) -> str:
        """Stop `agent` after the step in flight, its task dropped or (`retry`) tried again; what follows, said."""
        return steer_logged(store, _repo_root(view), view.run_id, agent, "stop", retry=retry)


def _repo_root(view: RunView) -> Path | None:
    return Path(view.repo) if view.repo else None
