"""`plait status`, `cost` and `show` of a run read straight from the SQLite log's rows (`plait.ui._fast_events`),
without pydantic and the event models.

What they print is printed by the same functions as the full read's (`plait.ui._view.print_status`, `print_cost`,
`plait.ui._runs.print_transcript`), from the same fields: the run's fold tells events apart by their kind and prices
calls with the plain rule. Only a repository with nothing set is read here; whenever the rows are not what the reader
expects, nothing is printed and the function says so (False): the caller reads the log the full way, which says
what is wrong with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast

from plait.ui._fast_events import read_events, run_ids
from plait.ui._reading import pick_run, read_redactor, settings_if_any

if TYPE_CHECKING:
    from plait.events.types import Event
    from plait.redact import Redactor
    from plait.workspace import Repo

__all__ = ["ReadRun", "read_run", "show_cost", "show_status", "show_transcript"]


class ReadRun(NamedTuple):
    """A run's events read from the log's rows: its repository, id, events and the redactor they were shown by."""

    repo: Repo
    run_id: str
    events: list[Event]
    redact: Redactor


def read_run(repo_path: Path, run_ref: str) -> ReadRun | None:
    """The run `run_ref` names, its events read from the rows; None when the log has to be read the full way: a
    setting is set, the log is not the SQLite file, or a row is not what the reader reads."""
    from plait.workspace import Repo

    repo = Repo.discover(repo_path)
    log = repo.common_dir / "plait" / "events.db"
    if settings_if_any(repo.root) is not None or not log.exists():
        return None
    ids = run_ids(log)
    if ids is None:
        return None
    run_id = pick_run(ids, run_ref)
    redact = read_redactor(repo.root)
    read = read_events(log, run_id, redact)
    if read is None:
        return None
    return ReadRun(repo, run_id, cast("list[Event]", read), redact)  # objects with the events' fields


def show_status(repo_path: Path, run_ref: str, *, as_json: bool) -> bool:
    """Print a run's status once, as `plait status --plain` (or `--json`) does; False when nothing was printed."""
    from plait.ui._view import print_status

    run = read_run(repo_path, run_ref)
    if run is None:
        return False
    print_status(run.run_id, run.events, as_json=as_json)
    return True


def show_cost(repo_path: Path, run_ref: str, *, as_json: bool) -> bool:
    """Print what a run spent, as `plait cost` does; False when nothing was printed."""
    from plait.ui._view import print_cost

    run = read_run(repo_path, run_ref)
    if run is None:
        return False
    print_cost(run.run_id, run.events, as_json=as_json)
    return True


def show_transcript(repo_path: Path, run_ref: str, task: str | None, *, full: bool, no_pager: bool) -> bool:
    """Print a run's transcript, as `plait show` does; False when nothing was printed."""
    from plait.ui._runs import print_transcript

    run = read_run(repo_path, run_ref)
    if run is None:
        return False
    print_transcript(run.repo, run.run_id, run.events, task, run.redact, full=full, no_pager=no_pager)
    return True
