"""The conflict radar: live branches trial-merged against each other while their agents still work.

Every few seconds the latest checkpoint of each running attempt is merged (git's merge outside every work
tree, `Repo.merge_trees`) with every other one and with the integration head. A conflict nobody was told of yet
becomes a note on the board for both agents, naming the files and the other task's intent; the board gives it
to them at their next turn.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

from plait.events.runlog import RunLog
from plait.events.types import NotePosted
from plait.plan_model import Plan
from plait.workspace import GitError, Repo

__all__ = ["Radar"]


class Radar:
    """Watches the checkpoints of one run and tells agents of conflicts coming their way."""

    def __init__(self, repo: Repo, log: RunLog, plan: Plan, head: Callable[[], str]) -> None:
        self.repo, self.log = repo, log
        self.titles = {t.id: t.title for t in plan.tasks}
        self.shared = frozenset(plan.shared)
        self.head = head
        self.told: set[tuple[str, str, tuple[str, ...]]] = set()

    async def watch(self, interval: float = 5.0) -> None:
        """Scan until cancelled."""
        while True:
            await asyncio.sleep(interval)
            await asyncio.to_thread(self.scan)

    def live(self) -> dict[str, str]:
        """The latest checkpoint of each running attempt, by task."""
        prefix = f"refs/plait/checkpoints/{self.log.run_id}/"
        out = self.repo.git("for-each-ref", "--format=%(refname) %(objectname)", prefix, check=False)
        found: dict[str, str] = {}
        for line in out.splitlines():
            ref, sha = line.split()
            found[ref.removeprefix(prefix).rsplit(".", 1)[0]] = sha
        return found

    def conflicts(self, ours: str, theirs: str) -> list[str]:
        """The paths git's merge of the two would leave conflicted (merged outside every work tree)."""
        try:
            return self.repo.merge_trees(ours, theirs)[1]
        except GitError:
            return []

    def scan(self) -> int:
        """One look at every pair of live branches and at each against the integration head; returns notes posted."""
        live, posted = self.live(), 0
        for (a, sha_a), (b, sha_b) in itertools.combinations(sorted(live.items()), 2):
            files = self.conflicts(sha_a, sha_b)
            if files and (a, b, tuple(files)) not in self.told:
                self.told.add((a, b, tuple(files)))
                self._warn(a, b, files)
                self._warn(b, a, files)
                posted += 1
        head = self.head()
        for task, sha in sorted(live.items()):
            files = self.conflicts(head, sha)
            if files and ("integrated", task, tuple(files)) not in self.told:
                self.told.add(("integrated", task, tuple(files)))
                text = (
                    f"Conflict radar: your changes to {', '.join(files)} conflict with work already integrated "
                    "for this run. Re-read those files (they will be merged with yours) and keep your edits there "
                    "small and local."
                )
                self._post(task, text, files)
                posted += 1
        return posted

    def _warn(self, task: str, other: str, files: list[str]) -> None:
        own = [f for f in files if f not in self.shared]
        shared = [f for f in files if f in self.shared]
        said = f"task `{other}` ({self.titles.get(other, other)})"
        parts = []
        if own:
            parts.append(
                f"Conflict radar: your changes to {', '.join(own)} overlap lines that {said} is changing at the same "
                "time. Keep your edits there minimal and local (add rather than rewrite), or leave those files alone "
                "if your task allows it; both branches will be merged."
            )
        if shared:
            parts.append(
                f"{'Also' if own else 'Conflict radar'}: {said} is adding to {', '.join(shared)}, which the plan "
                "shares, at the same place as you. Nothing to do if you only added lines of your own, as your brief "
                "says: the merge keeps both tasks' additions. Put back any line that was already there that you "
                "changed or removed."
            )
        self._post(task, " ".join(parts), files)

    def _post(self, task: str, text: str, files: list[str]) -> None:
        self.log.append(
            NotePosted(run_id=self.log.run_id, agent="radar", topic="conflict", text=text, paths=files, to=[task])
        )
