"""Ready tasks start by critical path: the longest chain of dependants first, ties in plan order."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from plait.run.scheduler import Attempt, Scheduler


def _starts(deps: Mapping[str, Sequence[str]], concurrency: int, fail: frozenset[str] = frozenset()) -> list[str]:
    """The order attempts start in, each attempt ending before the next may start (one at a time, or all blocked)."""
    order: list[str] = []

    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        order.append(task if number == 1 else f"{task}#{number}")
        await asyncio.sleep(0)
        return Attempt(task not in fail or number > 1, "broke")

    asyncio.run(Scheduler(deps, attempt, concurrency=concurrency).run())
    return order


def test_the_task_with_the_longest_chain_of_dependants_starts_first() -> None:
    # plan order lists the short branches first; c heads a chain of three, b one of two (as long as c2's)
    deps = {"a": [], "b": [], "c": [], "c2": ["c"], "c3": ["c2"], "b2": ["b"]}
    assert _starts(deps, concurrency=1) == ["c", "b", "c2", "a", "c3", "b2"]


def test_a_freed_slot_goes_to_a_newly_ready_dependant_on_the_critical_path() -> None:
    # when c finishes, c2 (three to go with itself) becomes ready while a and b have long been waiting
    deps = {"a": [], "b": [], "c": [], "c2": ["c"], "c3": ["c2"], "c4": ["c3"]}
    assert _starts(deps, concurrency=1) == ["c", "c2", "c3", "a", "b", "c4"]


def test_ties_keep_plan_order_and_a_retry_keeps_its_priority() -> None:
    deps = {"x": [], "y": [], "z": [], "w": ["z"]}
    assert _starts(deps, concurrency=1) == ["z", "x", "y", "w"]
    assert _starts(deps, concurrency=1, fail=frozenset({"z"})) == ["z", "z#2", "x", "y", "w"]


def test_the_concurrency_limit_still_holds() -> None:
    running = 0
    peak = 0

    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        running -= 1
        return Attempt(True)

    deps = {f"t{i}": ([f"t{i - 5}"] if i >= 5 else []) for i in range(20)}
    results = asyncio.run(Scheduler(deps, attempt, concurrency=3).run())
    assert peak == 3 and all(r.status == "done" for r in results.values())
