"""How a run starts: the commit it starts from, its id, and its first events in the log."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from plait.events.runlog import RunLog
from plait.events.types import Decision, RunStarted
from plait.settings import Settings
from plait.workspace import Repo

__all__ = ["RunBase", "choose_base", "new_run_id", "record_start"]


@dataclass(frozen=True)
class RunBase:
    """The commit a run starts from (its base), the branch it was on, and whether it holds uncommitted changes."""

    commit: str
    ref: str
    snapshot: bool = False
    left_out: tuple[str, ...] = ()
    """Uncommitted paths the run does not see (when not snapshotted)."""


def new_run_id() -> str:
    """A new run's id: when it started, and four random hex digits."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def choose_base(repo: Repo, *, include_uncommitted: bool) -> RunBase:
    """HEAD, or a snapshot commit of HEAD plus the uncommitted changes; the user's checkout is not touched."""
    dirty = tuple(repo.dirty_paths())
    if dirty and include_uncommitted:
        return RunBase(repo.snapshot("plait: snapshot of uncommitted changes"), repo.head_ref(), snapshot=True)
    return RunBase(repo.head(), repo.head_ref(), left_out=dirty)


def record_start(log: RunLog, repo: Repo, task: str, base: RunBase, model: str, settings: Settings) -> None:
    """The first events of a run: what it is asked, from which commit, and what it leaves out."""
    log.append(
        RunStarted(
            run_id=log.run_id,
            task=task,
            repo=str(repo.root),
            base_commit=base.commit,
            base_ref=base.ref,
            model=model,
            settings=settings.model_dump(mode="json", exclude={"openai_api_key", "anthropic_api_key"}),
            snapshot=base.snapshot,
        )
    )
    if base.left_out:
        log.append(
            Decision(
                run_id=log.run_id,
                topic="base",
                decision=f"started from {base.ref} without {len(base.left_out)} uncommitted change(s)",
                reason="the run starts from a commit; --include-uncommitted snapshots the changes instead",
                data={"paths": list(base.left_out)},
            )
        )
