"""What the commands share: the consoles, common options, and opening a repository's event log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from plait.errors import EnvironmentProblem, UsageError
from plait.events.store import EventStore, ObservedStore, RedactingStore, SQLiteEventStore
from plait.settings import Settings
from plait.ui.feed import make_redactor
from plait.workspace import Repo

__all__ = ["JsonOpt", "RepoOpt", "err", "open_store", "out", "resolve_run", "run_store", "store_path"]

out = Console(soft_wrap=True)
err = Console(stderr=True)

RepoOpt = Annotated[Path, typer.Option("--repo", "-C", help="The git repository to work on.", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def open_store(repo: Repo, *, create: bool) -> SQLiteEventStore:
    """The repository's event log; without `create`, a repository with no runs is an error."""
    path = repo.common_dir / "plait" / "events.db"
    if not create and not path.exists():
        raise EnvironmentProblem(f"no plait runs in {repo.root} yet: start one with `plait run TASK`")
    return SQLiteEventStore(path)


def run_store(store: EventStore, settings: Settings | None) -> ObservedStore:
    """`store` as a run writes to it: each event redacted (the environment's and the settings' secrets) before
    it is written, then told to the listeners (progress lines)."""
    return ObservedStore(RedactingStore(store, make_redactor(settings)))


def store_path(store: object) -> Path:
    """The file of a SQLite store, also through the stores wrapping it (`ObservedStore`, `RedactingStore`)."""
    while not isinstance(store, SQLiteEventStore):
        store = getattr(store, "inner", None)
        if store is None:
            raise TypeError("not a SQLite event store")
    return store.path


def resolve_run(store: SQLiteEventStore, ref: str) -> str:
    """A run id from an id, a unique prefix of one, or `last`."""
    ids = store.run_ids()
    if ref == "last" and ids:
        return ids[-1]
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run '{ref}' in this repository: `plait runs` lists them")
    raise UsageError(f"'{ref}' matches {len(matches)} runs: give more of the id")
