"""A resumed run opens its attempts a few at a time: the git work that makes their worktrees again runs at most
`opening` at once, while other git work (a live agent's checkpoint) is not held up by it."""

from __future__ import annotations

import asyncio
import threading

from plait.run._opening import GitThreads


class Gauge:
    """Git work that waits to be let go, counting how many run at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.go = threading.Event()
        self.two = threading.Event()
        """Set once two run at once."""

    def __call__(self) -> None:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            if self.running == 2:
                self.two.set()
        self.go.wait(30)
        with self.lock:
            self.running -= 1


def test_at_most_opening_at_once_and_other_git_work_goes_on() -> None:
    git = GitThreads(8, opening=2)
    gauge = Gauge()

    async def main() -> None:
        opened = [asyncio.ensure_future(git.opening(gauge)) for _ in range(6)]
        assert await asyncio.to_thread(gauge.two.wait, 30)
        assert await asyncio.wait_for(git.run(lambda: "checkpoint"), 30) == "checkpoint"
        assert gauge.running == 2  # the other four wait for a turn, not for a thread
        gauge.go.set()
        await asyncio.gather(*opened)

    try:
        asyncio.run(main())
    finally:
        git.close()
    assert gauge.most == 2
