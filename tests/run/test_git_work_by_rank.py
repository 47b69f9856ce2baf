"""The attempts' git work goes by rank: a few jobs at once, the next the one of the attempt on the longest chain of
tasks (arrival order among equals), whatever order they asked in."""

from __future__ import annotations

import asyncio

from plait.run._ranked import RankedGate
from plait.run.scheduler import LAST, Attempt, Scheduler, rank


def test_a_place_that_comes_free_goes_to_the_lowest_rank_waiting() -> None:
    admitted: list[str] = []

    async def main() -> None:
        gate = RankedGate(1)
        await gate.enter(LAST)  # held: the others wait

        async def job(name: str, at: tuple[int, int]) -> None:
            await gate.enter(at)
            admitted.append(name)

        waiting = [
            asyncio.ensure_future(job("spare", (-1, 0))),
            asyncio.ensure_future(job("critical", (-3, 4))),
            asyncio.ensure_future(job("between", (-2, 1))),
            asyncio.ensure_future(job("spare too", (-1, 2))),
        ]
        gone = asyncio.ensure_future(job("cancelled", (-5, 0)))
        await asyncio.sleep(0)  # every job has queued
        gone.cancel()
        for _ in waiting:
            gate.leave()
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        await asyncio.gather(*waiting)

    asyncio.run(main())
    assert admitted == ["critical", "between", "spare", "spare too"]


def test_an_attempt_runs_with_its_tasks_rank_and_what_it_starts_inherits_it() -> None:
    seen: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {}

    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        async def inner() -> tuple[int, int]:
            return rank()

        seen[task] = (rank(), await asyncio.ensure_future(inner()))
        return Attempt(True)

    deps = {"a": [], "c": [], "c2": ["c"], "c3": ["c2"]}
    asyncio.run(Scheduler(deps, attempt, concurrency=2).run())
    assert seen == {"a": ((-1, 0), (-1, 0)), "c": ((-3, 1),) * 2, "c2": ((-2, 2),) * 2, "c3": ((-1, 3),) * 2}
    assert rank() == LAST
