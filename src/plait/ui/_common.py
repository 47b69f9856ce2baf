"""What the commands share: the consoles, common options, and opening a repository's event log."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from plait.errors import EnvironmentProblem, UsageError

if TYPE_CHECKING:  # the event log and the settings are imported where used: `plait --help` needs neither
    from plait.events.store import EventStore, ObservedStore
    from plait.events.types import Event
    from plait.settings import Settings
    from plait.workspace import Repo

__all__ = [
    "JsonOpt",
    "RepoOpt",
    "console",
    "err",
    "has_log",
    "open_store",
    "out",
    "provider_failure",
    "resolve_run",
    "run_store",
]


def console(**options: Any) -> Console:
    """A rich console; with `NO_COLOR` set (to anything but nothing) it writes no style at all, not even bold
    (rich alone drops only the colours)."""
    if os.environ.get("NO_COLOR"):
        options["color_system"] = None
    return Console(**options)


out = console(soft_wrap=True)
err = console(stderr=True)

RepoOpt = Annotated[Path, typer.Option("--repo", "-C", help="The git repository to work on.", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def open_store(repo: Repo, *, create: bool) -> EventStore:
    """The repository's event log, where the `store` setting says (the SQLite file in .git/plait by default);
    without `create`, a repository with no SQLite log is an error.

    The setting is read from the user's configuration, never from a run: `plait resume` finds the run there.
    """
    from plait.events.backends import open_event_store, store_scope
    from plait.settings import load_settings

    location = load_settings(repo.root, report=None).settings.store
    path = repo.common_dir / "plait" / "events.db"
    if not location and not create and not path.exists():
        raise EnvironmentProblem(f"no plait runs in {repo.root} yet: start one with `plait run TASK`")
    return open_event_store(location, path, scope=store_scope(repo) if location else "")


def has_log(repo: Repo) -> bool:
    """Whether the repository has an event log to read (a server always has one)."""
    from plait.settings import load_settings

    return bool(load_settings(repo.root, report=None).settings.store) or (repo.common_dir / "plait/events.db").exists()


def run_store(store: EventStore, settings: Settings | None) -> ObservedStore:
    """`store` as a run writes to it: each event redacted (the environment's and the settings' secrets) before
    it is written, then told to the listeners (progress lines)."""
    from plait.events.store import ObservedStore, RedactingStore
    from plait.ui.feed import make_redactor

    return ObservedStore(RedactingStore(store, make_redactor(settings)))


def resolve_run(store: EventStore, ref: str, *, acts_on: Callable[[str], bool] | None = None, what: str = "") -> str:
    """A run id from an id, a unique prefix of one, or `last`: the latest run the command can act on (`acts_on`,
    `what` naming such a run: `last` after a session means the latest change for `plait apply`)."""
    ids = store.run_ids()
    if ref == "last" and ids:
        fit = next((i for i in reversed(ids) if acts_on is None or acts_on(i)), None)
        if fit is None:
            raise UsageError(f"no {what or 'run'} in this repository to take as `last`: `plait runs` lists the runs")
        return fit
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run '{ref}' in this repository: `plait runs` lists them")
    raise UsageError(f"'{ref}' matches {len(matches)} runs: give more of the id")


def provider_failure(events: list[Event]) -> str:
    """The provider's one-line error when a run got no answer from it and every agent stopped on its error
    (a rejected key, an unknown model): such a run exits as a model provider problem, not a failed task."""
    from plait.events.types import AgentStopped, ModelCallFailed, ModelCallFinished

    stops = [e for e in events if isinstance(e, AgentStopped)]
    if not stops or any(e.reason != "model_error" for e in stops):
        return ""
    if any(isinstance(e, ModelCallFinished) for e in events):
        return ""
    failed = [e.error for e in events if isinstance(e, ModelCallFailed)] or [stops[-1].summary]
    lines = failed[-1].strip().splitlines()
    return lines[0] if lines else "the model provider failed"
