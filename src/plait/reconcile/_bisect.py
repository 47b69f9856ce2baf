"""Find the first branch of a failing batch: try the gate's hint first, then bisect the merged prefixes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from plait.reconcile.gate import GateResult

__all__ = ["find_culprit"]

Probe = Callable[[int], Awaitable[GateResult]]
"""Gate the batch's prefix ending at a position (0-based) and say whether it passed."""


async def find_culprit(tasks: Sequence[str], last: GateResult, probe: Probe) -> tuple[int, GateResult]:
    """The position of the first branch whose prefix fails, and that prefix's failing result.

    The prefix before the batch (position -1) passed, and the whole batch (`last`) failed. A hint naming
    tasks of the batch is tried first: the latest hinted task is checked with its own prefix and the one
    before it, which costs one or two gate runs when the hint is right; bisection does the rest, about
    log2 N runs. The prefix just before the returned position passed (or is the integration head).
    """
    failed: dict[int, GateResult] = {len(tasks) - 1: last}
    lo, hi = -1, len(tasks) - 1

    async def look(position: int) -> bool:
        nonlocal lo, hi
        result = await probe(position)
        if result.passed:
            lo = position
        else:
            hi, failed[position] = position, result
        return result.passed

    hinted = [i for i, task in enumerate(tasks) if task in last.culprit_hint]
    if hinted:
        candidate = hinted[-1]
        if lo < candidate < hi:
            await look(candidate)
        if hi == candidate and lo < candidate - 1:
            await look(candidate - 1)
    while hi - lo > 1:
        await look((lo + hi) // 2)
    return hi, failed[hi]
