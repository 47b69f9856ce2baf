from __future__ import annotations

from collections.abc import Callable

from plait.coord import Claim, Leases, Refusal
from plait.events import Decision, SQLiteEventStore, TaskFinished
from plait.plan.model import Plan

RUN = "r1"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lease_log(store: SQLiteEventStore) -> list[tuple[str, str, str, str]]:
    return [
        (e.data["action"], e.data["path"], e.data["task"], e.data["holder"])
        for e in store.events(RUN, kinds=["decision"])
        if isinstance(e, Decision) and e.topic == "lease"
    ]


def test_a_task_edits_its_own_write_set_without_a_claim(store: SQLiteEventStore, plan: Plan) -> None:
    result = Leases(store, RUN, plan).claim("api", "./src/api/ledger.py", "edit")
    assert isinstance(result, Claim) and result.own and "own write-set" in result.message
    assert _lease_log(store) == []


def test_a_path_in_a_running_tasks_write_set_is_refused_naming_it(
    store: SQLiteEventStore, plan: Plan, start: Callable[..., None]
) -> None:
    leases = Leases(store, RUN, plan)
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
    leases = Leases(store, RUN, plan)

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
    leases = Leases(store, RUN, plan)
    leases.claim("api", "README.md", "docs")
    store.append(TaskFinished(run_id=RUN, agent="api", status="failed"))
    assert isinstance(leases.claim("ui", "README.md", "screenshot"), Claim)
    assert isinstance(leases.claim("ui", "src/api/ledger.py", "a fix"), Claim)


def test_claims_expire_after_the_timeout(store: SQLiteEventStore, plan: Plan, start: Callable[..., None]) -> None:
    start("api", "ui")
    clock = Clock()
    leases = Leases(store, RUN, plan, timeout=60, clock=clock)
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
    leases = Leases(store, RUN, plan)
    leases.claim("api", "README.md", "docs")
    leases.claim("docs", "setup.cfg", "a flag")
    leases.claim("ui", "tox.ini", "an env")
    leases.release_all("docs")

    rebuilt = Leases.from_log(store, RUN, plan)

    assert {p: (c.task, c.why) for p, c in rebuilt.holders().items()} == {
        "README.md": ("api", "docs"),
        "tox.ini": ("ui", "an env"),
    }
    refused = rebuilt.claim("docs", "README.md", "docs too")
    assert isinstance(refused, Refusal) and refused.holder == "api" and "docs" in refused.why
