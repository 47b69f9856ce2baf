from __future__ import annotations

import asyncio
from collections.abc import Callable

from plait.coord import Claim, Leases, Refusal
from plait.events import LeaseChanged, SQLiteEventStore, TaskFinished
from plait.events.runlog import RunLog
from plait.plan_model import Plan

RUN = "r1"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lease_log(store: SQLiteEventStore) -> list[tuple[str, str, str, str]]:
    return [
        (e.action, e.path, e.task, e.holder) for e in store.events(RUN, kinds=["lease"]) if isinstance(e, LeaseChanged)
    ]


def test_a_task_edits_its_own_write_set_without_a_claim(store: SQLiteEventStore, plan: Plan) -> None:
    result = Leases(RunLog(store, RUN), plan).claim("api", "./src/api/ledger.py", "edit")
    assert isinstance(result, Claim) and result.own and "own write-set" in result.message
    assert _lease_log(store) == []


def test_a_path_in_a_running_tasks_write_set_is_refused_naming_it(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    leases = Leases(RunLog(store, RUN), plan)
    assert isinstance(leases.claim("api", "src/ui/view.py", "fix a call"), Claim)  # ui is not running yet
    leases.release_all("api")
    start("ui")

    refused = leases.claim("api", "src/ui/view.py", "fix a call")

    assert isinstance(refused, Refusal) and refused.holder == "ui"
    assert "task `ui` (Show the ledger)" in refused.message and "write-set" in refused.message
    assert "post_note" in refused.message and "work around it" in refused.message
    assert _lease_log(store)[-1] == ("refuse", "src/ui/view.py", "api", "ui")


def test_a_claim_is_granted_then_refuses_others_until_released(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    start("api", "ui")
    leases = Leases(RunLog(store, RUN), plan)

    granted = leases.claim("api", "README.md", "document the ledger API")
    refused = leases.claim("ui", "README.md", "add a screenshot")
    leases.claim("api", "config/app.toml", "a ledger setting")
    inside = leases.claim("ui", "config/", "reformat the configuration")

    assert isinstance(granted, Claim) and granted.until > 0 and not granted.own
    assert isinstance(refused, Refusal) and refused.holder == "api"
    assert "Add the ledger API" in refused.message and "document the ledger API" in refused.message
    assert isinstance(inside, Refusal) and inside.holder == "api"
    assert isinstance(leases.claim("api", "README.md", "again"), Claim)  # its own claim is renewed
    assert leases.release_all("api") == ["README.md", "config/app.toml"]
    assert isinstance(leases.claim("ui", "README.md", "add a screenshot"), Claim)
    assert _lease_log(store) == [
        ("claim", "README.md", "api", "api"),
        ("refuse", "README.md", "ui", "api"),
        ("claim", "config/app.toml", "api", "api"),
        ("refuse", "config", "ui", "api"),
        ("claim", "README.md", "api", "api"),
        ("release", "README.md", "api", "api"),
        ("release", "config/app.toml", "api", "api"),
        ("claim", "README.md", "ui", "ui"),
    ]


def test_the_claims_of_a_finished_task_no_longer_hold(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    start("api", "ui")
    leases = Leases(RunLog(store, RUN), plan)
    leases.claim("api", "README.md", "docs")
    store.append(TaskFinished(run_id=RUN, agent="api", status="failed"))
    assert isinstance(leases.claim("ui", "README.md", "screenshot"), Claim)
    assert isinstance(leases.claim("ui", "src/api/ledger.py", "a fix"), Claim)


def test_claims_expire_after_the_timeout(store: SQLiteEventStore, plan: Plan, start: Callable[..., None]) -> None:
    start("api", "ui")
    clock = Clock()
    leases = Leases(RunLog(store, RUN), plan, timeout=60, clock=clock)
    leases.claim("api", "README.md", "docs")
    clock.now += 59
    assert isinstance(leases.claim("ui", "README.md", "screenshot"), Refusal)
    clock.now += 2
    assert isinstance(leases.claim("ui", "README.md", "screenshot"), Claim)
    assert ("expire", "README.md", "api", "api") in _lease_log(store)
    assert set(leases.holders()) == {"README.md"} and leases.holders()["README.md"].task == "ui"


def test_leases_rebuilt_from_the_log_hold_the_same_claims(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    start("api", "ui", "docs")
    leases = Leases(RunLog(store, RUN), plan)
    leases.claim("api", "README.md", "docs")
    leases.claim("docs", "setup.cfg", "a flag")
    leases.claim("ui", "tox.ini", "an env")
    leases.release_all("docs")

    rebuilt = Leases.from_log(RunLog(store, RUN), plan)

    assert {p: (c.task, c.why) for p, c in rebuilt.holders().items()} == {
        "README.md": ("api", "docs"),
        "tox.ini": ("ui", "an env"),
    }
    refused = rebuilt.claim("docs", "README.md", "docs too")
    assert isinstance(refused, Refusal) and refused.holder == "api" and "docs" in refused.why


def _waiting(leases: Leases, task: str) -> Callable[[], bool]:
    return lambda: task in leases.waits()


async def _until(condition: Callable[[], bool]) -> None:
    """Yield to the event loop until `condition` holds (a wait is registered, a task is done...)."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the condition never held")


def test_a_claim_waits_for_the_running_owner_and_is_granted_when_its_attempt_ends(
    store: SQLiteEventStore, plan: Plan
) -> None:
    leases = Leases(RunLog(store, RUN), plan, tracked=True)
    leases.start("api")
    leases.start("ui")

    async def scenario() -> Claim | Refusal:
        waiter = asyncio.create_task(leases.acquire("ui", "src/api/ledger.py", "call the new API"))
        await _until(_waiting(leases, "ui"))
        assert not waiter.done() and leases.waits() == {"ui": ("api", "src/api/ledger.py")}
        leases.release_all("api")  # the api task's attempt ended
        return await waiter

    granted = asyncio.run(scenario())

    assert isinstance(granted, Claim) and granted.after == ("api",) and not granted.own
    assert "after task `api` finished" in granted.message
    assert leases.waits() == {}
    assert _lease_log(store) == [
        ("wait", "src/api/ledger.py", "ui", "api"),
        ("claim", "src/api/ledger.py", "ui", "ui"),
    ]


def test_releasing_a_claim_wakes_the_task_waiting_for_it(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    start("api", "ui")
    leases = Leases(RunLog(store, RUN), plan, poll=60)  # only the release can wake the waiter in time

    async def scenario() -> Claim | Refusal:
        assert isinstance(leases.claim("api", "README.md", "document the API"), Claim)
        waiter = asyncio.create_task(leases.acquire("ui", "README.md", "add a screenshot"))
        await _until(_waiting(leases, "ui"))
        assert leases.release_all("api") == ["README.md"]
        return await asyncio.wait_for(waiter, 10)

    granted = asyncio.run(scenario())

    assert isinstance(granted, Claim) and granted.after == ("api",)
    assert leases.holders()["README.md"].task == "ui"


def test_a_wait_that_lasts_too_long_is_refused_naming_the_holder(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    start("api", "ui")
    leases = Leases(RunLog(store, RUN), plan, wait=0.05, poll=0.01)
    leases.claim("api", "README.md", "document the API")

    refused = asyncio.run(leases.acquire("ui", "README.md", "add a screenshot"))

    assert isinstance(refused, Refusal) and refused.holder == "api" and refused.waited == 0.05
    assert refused.message.startswith("refused after waiting") and "README.md is held by task `api`" in refused.message
    assert "post_note" in refused.message
    assert _lease_log(store)[-2:] == [("wait", "README.md", "ui", "api"), ("refuse", "README.md", "ui", "api")]
    assert leases.waits() == {}


def test_a_wait_that_would_close_a_cycle_is_refused_at_once_and_logged(store: SQLiteEventStore, plan: Plan) -> None:
    leases = Leases(RunLog(store, RUN), plan, tracked=True)
    for task in ("api", "ui", "docs"):
        leases.start(task)

    async def scenario() -> tuple[Claim | Refusal, Claim | Refusal]:
        ui_waits = asyncio.create_task(leases.acquire("ui", "src/api/ledger.py", "call the API"))
        await _until(_waiting(leases, "ui"))
        docs_waits = asyncio.create_task(leases.acquire("docs", "src/ui/view.py", "link the docs"))
        await _until(_waiting(leases, "docs"))
        # api -> docs would close api -> docs -> ui -> api
        closing = await asyncio.wait_for(leases.acquire("api", "docs/index.md", "document the API"), 10)
        leases.release_all("api")
        ui_claim = await asyncio.wait_for(ui_waits, 10)
        assert not docs_waits.done()  # docs still waits for ui, which is at work
        docs_waits.cancel()
        return closing, ui_claim

    closing, ui_claim = asyncio.run(scenario())

    assert isinstance(closing, Refusal) and closing.holder == "docs"
    assert closing.cycle == ("api", "docs", "ui", "api")
    assert "`docs` waits for `ui` (src/ui/view.py), `ui` waits for you (src/api/ledger.py)" in closing.message
    assert "deadlock" in closing.message and "work around it" in closing.message
    decisions = [e for e in store.events(RUN, kinds=["lease"]) if isinstance(e, LeaseChanged)]
    cycles = [e for e in decisions if e.action == "cycle"]
    assert [(e.agent, e.cycle) for e in cycles] == [("api", ["api", "docs", "ui", "api"])]
    # the waits that did not close the cycle go on: ui gets api's file once api is done
    assert isinstance(ui_claim, Claim) and ui_claim.after == ("api",)
    assert leases.waits() == {}


def test_shared_files_need_no_claim(store: SQLiteEventStore, plan: Plan, start: Callable[..., None]) -> None:
    start("api", "ui")
    leases = Leases(RunLog(store, RUN), plan, shared=["CHANGELOG*"])
    first, second = leases.claim("api", "CHANGELOG.md", "a line"), leases.claim("ui", "./CHANGELOG.md", "a line")
    assert isinstance(first, Claim) and first.shared and isinstance(second, Claim) and second.shared
    assert "shared" in first.message and not leases.needs_claim("ui", "CHANGELOG.md")
    assert leases.needs_claim("ui", "README.md") and not leases.needs_claim("ui", "src/ui/view.py")
    assert _lease_log(store) == [] and leases.holders() == {}


def test_a_tracked_task_holds_its_write_set_only_while_the_run_says_it_is_at_work(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    start("api")  # in the log, but a resumed run has not started it again yet
    leases = Leases(RunLog(store, RUN), plan, tracked=True)
    assert not leases.running("api")
    assert isinstance(leases.claim("ui", "src/api/ledger.py", "a fix"), Claim)
    leases.release_all("ui")
    leases.start("api")
    assert leases.running("api") and isinstance(leases.claim("ui", "src/api/ledger.py", "a fix"), Refusal)


def test_a_claim_granted_after_a_wait_is_rebuilt_from_the_log_and_waits_are_not(
    store: SQLiteEventStore, plan: Plan
) -> None:
    leases = Leases(RunLog(store, RUN), plan, tracked=True)
    leases.start("api")
    leases.start("ui")

    async def scenario() -> None:
        waiter = asyncio.create_task(leases.acquire("ui", "README.md", "screenshot"))
        await asyncio.sleep(0)
        assert isinstance(await waiter, Claim)  # nobody held it
        leases.claim("ui", "config/app.toml", "a setting")
        api_waits = asyncio.create_task(leases.acquire("api", "README.md", "docs"))
        await _until(_waiting(leases, "api"))
        api_waits.cancel()

    asyncio.run(scenario())
    rebuilt = Leases.from_log(RunLog(store, RUN), plan, tracked=True)

    assert set(rebuilt.holders()) == {"README.md", "config/app.toml"} and rebuilt.waits() == {}
    assert {c.task for c in rebuilt.holders().values()} == {"ui"}
