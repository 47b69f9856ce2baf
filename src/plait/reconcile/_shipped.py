"""The integration branch kept in a shared event log too, so that a run can be resumed from another machine.

With a server store (PostgreSQL), each move of the integration branch also puts a bundle of the new commits (since
the branch's last head) in the store, before the move is logged. A process resuming the run in another clone of the
repository, where the branch and its commits are missing, fetches them from there in logged order and puts the
branch back where it was. The SQLite log lives beside its one repository, which keeps the commits itself.
"""

from __future__ import annotations

from plait.errors import StateError
from plait.events.backends import is_shared
from plait.events.runlog import RunLog
from plait.events.types import Integrated
from plait.workspace import Repo

__all__ = ["ship", "take_back"]


def _key(commit: str) -> str:
    return f"integration/{commit}"


def ship(repo: Repo, log: RunLog, old: str, new: str) -> None:
    """Keep the commits from `old` to `new` (the branch's move) in a shared store."""
    if new == old or not is_shared(log.store):
        return
    from plait.workspace.bundles import bundle

    log.put_blob(_key(new), bundle(repo.root, new, since=[old]))


def take_back(repo: Repo, log: RunLog, branch: str, base: str) -> str:
    """The branch's logged head, its commits fetched from the store where this clone lacks them; '' for none.

    Raises:
        StateError: the run's base, or a logged head, is in neither this clone nor the store.
    """
    heads = [e.commit for e in log.events(kinds=["integrated"]) if isinstance(e, Integrated) and e.tasks]
    heads = [h for h in heads if h and h != base]
    if not heads or not is_shared(log.store):
        return ""
    if not repo.has_commit(base):
        raise StateError(f"the run's base {base[:10]} is not in this clone: fetch it, then resume")
    from plait.workspace.bundles import unbundle

    for head in heads:
        if repo.has_commit(head):
            continue
        data = log.get_blob(_key(head))
        if data is None:
            raise StateError(f"the integration branch's commit {head[:10]} is in neither this clone nor the log")
        unbundle(repo.root, data)
    return heads[-1]
