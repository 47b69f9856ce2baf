from __future__ import annotations

import asyncio

import pytest

from plait.run.scheduler import Attempt, Scheduler


class Recorder:
    """An attempt function whose tasks wait on events the test releases, so order is observable."""

    def __init__(self, fail: dict[str, int] | None = None) -> None:
        self.log: list[tuple[str, str]] = []
        self.fail = fail or {}
        self.running = 0
        self.peak = 0

    async def __call__(self, task: str, number: int, last: Attempt | None) -> Attempt:
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.log.append((task, "start" if last is None else f"retry after: {last.reason}"))
        await asyncio.sleep(0)
        self.running -= 1
        if number <= self.fail.get(task, 0):
            return Attempt(False, f"{task} broke on attempt {number}", detail="traceback...")
        self.log.append((task, "end"))
        return Attempt(True)


def test_tasks_start_only_after_their_dependencies_finish() -> None:
    rec = Recorder()
    deps = {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}
    results = asyncio.run(Scheduler(deps, rec, concurrency=4).run())
    assert all(r.status == "done" for r in results.values())
    order = [t for t, what in rec.log if what == "start"]
    ends = [t for t, what in rec.log if what == "end"]
    assert order[0] == "a" and order[-1] == "d"
    assert ends.index("a") < order.index("b") and ends.index("c") < order.index("d")


def test_independent_tasks_overlap_up_to_the_concurrency_limit() -> None:
    async def scenario(limit: int) -> int:
        gate = asyncio.Event()
        running = 0
        peak = 0

        async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            if running == limit or peak == limit:
                gate.set()
            await gate.wait()
            running -= 1
            return Attempt(True)

        await Scheduler({f"t{i}": [] for i in range(6)}, attempt, concurrency=limit).run()
        return peak

    assert asyncio.run(scenario(3)) == 3
    assert asyncio.run(scenario(1)) == 1


def test_a_failing_task_is_retried_with_the_reason_then_succeeds() -> None:
    rec = Recorder(fail={"b": 1})
    states: list[tuple[str, str]] = []
    sched = Scheduler({"a": [], "b": []}, rec, max_attempts=2, on_state=lambda t, s, r: states.append((t, s)))
    results = asyncio.run(sched.run())
    assert results["b"].status == "done" and results["b"].attempts == 2
    assert ("b", "retry after: b broke on attempt 1") in rec.log
    assert ("b", "retrying") in states


def test_a_task_that_keeps_failing_is_dropped_with_its_dependents_the_rest_go_on() -> None:
    rec = Recorder(fail={"b": 9})
    deps = {"a": [], "b": [], "c": ["b"], "d": ["a"]}
    results = asyncio.run(Scheduler(deps, rec, max_attempts=3).run())
    assert results["b"].status == "dropped" and results["b"].attempts == 3
    assert results["b"].failures == [f"b broke on attempt {n}" for n in (1, 2, 3)]
    assert results["c"].status == "dropped" and "depends on dropped task b" in results["c"].reason
    assert results["a"].status == results["d"].status == "done"


def test_an_attempt_that_says_retrying_cannot_help_is_not_retried() -> None:
    calls: list[int] = []

    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        calls.append(number)
        return Attempt(False, "budget spent", retry=False)

    results = asyncio.run(Scheduler({"a": []}, attempt, max_attempts=3).run())
    assert calls == [1] and results["a"].status == "dropped"


def test_the_wall_time_limit_fails_an_attempt() -> None:
    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        if number == 1:
            await asyncio.Event().wait()  # never set: only the limit ends it
        return Attempt(True)

    results = asyncio.run(Scheduler({"a": []}, attempt, wall_s=0.05, max_attempts=2).run())
    assert results["a"].status == "done" and "wall-time limit" in results["a"].failures[0]


def test_cancelling_the_run_cancels_running_attempts() -> None:
    cancelled: list[str] = []

    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(task)
            raise
        return Attempt(True)

    async def scenario() -> None:
        run = asyncio.ensure_future(Scheduler({"a": [], "b": []}, attempt).run())
        while len(cancelled) == 0 and not run.done():
            await asyncio.sleep(0.01)
            if len(asyncio.all_tasks()) >= 4:
                run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(scenario())
    assert sorted(cancelled) == ["a", "b"]


def test_unknown_dependencies_are_refused() -> None:
    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        return Attempt(True)

    with pytest.raises(ValueError, match="unknown dependencies"):
        Scheduler({"a": ["zz"]}, attempt)
