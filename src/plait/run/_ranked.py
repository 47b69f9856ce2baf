"""A gate that lets a few holders in at once, the waiting ones by rank: the attempts' git work, critical path first.

A run of 16 attempts on two processors starts 16 worktrees, checkpoints and commits at once; in a thread each,
they all finish late, the critical path's with the rest. Through the gate a few jobs run at once (two per processor
in `GitThreads`), and the next to go is the one of the attempt on the longest chain (`plait.run.scheduler.rank`),
in arrival order among equals: a link of the critical path waits only for jobs already running.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

from plait.run.scheduler import Rank

__all__ = ["RankedGate"]


class RankedGate:
    """At most `width` holders at once; a place that comes free goes to the waiter of the lowest rank."""

    def __init__(self, width: int) -> None:
        self._free = max(width, 1)
        self._waiting: list[tuple[Rank, int, asyncio.Future[None]]] = []
        self._arrival = itertools.count()

    async def enter(self, rank: Rank) -> None:
        """Wait for a place, behind every waiter of a lower rank; `leave()` gives it back."""
        if self._free and not self._waiting:
            self._free -= 1
            return
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (rank, next(self._arrival), place))
        try:
            await place
        except asyncio.CancelledError:
            if place.done() and not place.cancelled():  # given a place as it was cancelled: passed on
                self.leave()
            raise

    def leave(self) -> None:
        """Give a place back: to the first waiter by rank, or free."""
        while self._waiting:
            place = heapq.heappop(self._waiting)[2]
            if not place.done():  # a cancelled waiter's turn goes to the next
                place.set_result(None)
                return
        self._free += 1
