"""An attempt that gives its slot back early (it waits to merge) keeps it when other tasks depend on its task: the
slot goes to the first of them once it is done, not to an attempt started while it merged."""

from __future__ import annotations

import asyncio

from plait.run.scheduler import Attempt, Scheduler, release_slot


def _steps(deps: dict[str, list[str]]) -> list[str]:
    steps: list[str] = []

    async def attempt(task: str, number: int, last: Attempt | None) -> Attempt:
        steps.append(f"{task} starts")
        release_slot()  # the agent is done; merging waits for other merges
        for _ in range(20):  # the run's loop turns meanwhile: a slot given back would be handed out now
            await asyncio.sleep(0)
        steps.append(f"{task} ends")
        return Attempt(True)

    results = asyncio.run(Scheduler(deps, attempt, concurrency=1).run())
    assert {t: r.status for t, r in results.items()} == dict.fromkeys(deps, "done")
    return steps


def test_a_task_others_depend_on_keeps_its_slot_for_them_while_it_merges() -> None:
    assert _steps({"a": [], "c": [], "b": ["a"], "d": ["b"]}) == [
        "a starts",
        "a ends",
        "b starts",
        "b ends",
        "c starts",
        "d starts",
        "c ends",
        "d ends",
    ]


def test_a_task_nothing_depends_on_gives_its_slot_back_while_it_merges() -> None:
    assert _steps({"a": [], "c": []}) == ["a starts", "c starts", "a ends", "c ends"]
