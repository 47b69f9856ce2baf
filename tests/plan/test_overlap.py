from __future__ import annotations

import random
from typing import Any

import pytest
from rich.console import Console

from plait.globs import expand, matches
from plait.plan import OverlapDecision, describe_plan, render_plan, resolve_overlaps
from plait.plan_model import Plan, topological_order, validate_plan

FILES = [
    "README.md",
    "tally/__init__.py",
    "tally/cli.py",
    "tally/ledger.py",
    "tally/money.py",
    "tally/report.py",
    "tally/settle.py",
    "tally/split.py",
    "tally/storage.py",
    "tests/test_cli.py",
    "tests/test_money.py",
    "tests/test_report.py",
]


def _task(task_id: str, writes: list[str], **fields: Any) -> dict[str, Any]:
    return {"id": task_id, "title": f"do {task_id}", "instructions": f"Do {task_id}.", "writes": writes, **fields}


def _plan(*tasks: dict[str, Any], **fields: Any) -> Plan:
    plan = Plan.model_validate({"mode": "parallel", "reason": "independent parts", "tasks": list(tasks), **fields})
    assert validate_plan(plan) == []
    return plan


def _clashes(plan: Plan, files: list[str]) -> list[tuple[str, str]]:
    """Pairs of tasks that may run at the same time and write a common existing file."""
    order = {t.id: i for i, t in enumerate(topological_order(plan))}
    before: dict[str, set[str]] = {}
    for task in sorted(plan.tasks, key=lambda t: order[t.id]):
        before[task.id] = set(task.depends_on).union(*(before[d] for d in task.depends_on))
    found = []
    for i, a in enumerate(plan.tasks):
        for b in plan.tasks[i + 1 :]:
            unordered = a.id not in before[b.id] and b.id not in before[a.id]
            if unordered and expand(a.writes, files) & expand(b.writes, files):
                found.append((a.id, b.id))
    return found


def test_disjoint_write_sets_need_no_decision() -> None:
    plan = _plan(_task("money", ["tally/money.py"]), _task("report", ["tally/report.py", "tests/test_report.py"]))
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert decisions == [] and resolved == plan


def test_a_file_shared_by_a_small_part_of_both_write_sets_goes_to_one_task() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py", "tests/test_money.py", "tally/cli.py"]),
        _task("report", ["tally/report.py", "tests/test_report.py", "tally/cli.py"]),
    )
    resolved, decisions = resolve_overlaps(plan, FILES)

    assert [d.action for d in decisions] == ["assign"]
    assert decisions[0].tasks == ("currency", "report") and decisions[0].files == ("tally/cli.py",)
    assert decisions[0].what == "tally/cli.py goes to currency; report must not edit it"
    report = resolved.task("report")
    assert report.writes == ["tally/report.py", "tests/test_report.py"] and report.depends_on == []
    assert "do not edit tally/cli.py; task currency owns it" in report.instructions
    assert resolved.task("currency").writes == plan.task("currency").writes
    assert _clashes(resolved, FILES) == []


def test_a_task_naming_a_file_gets_it_from_a_task_that_only_globs_it() -> None:
    plan = _plan(
        _task("retype", ["tally/*.py"]),
        _task("cli-flags", ["tally/cli.py", "tests/test_cli.py", "README.md"]),
    )
    resolved, decisions = resolve_overlaps(plan, FILES)

    assert [(d.action, d.tasks) for d in decisions] == [("assign", ("cli-flags", "retype"))]
    assert "names it explicitly" in decisions[0].why
    retype = resolved.task("retype")
    assert retype.writes == ["tally/*.py", "!tally/cli.py"]
    assert "tally/cli.py" not in expand(retype.writes, FILES) and "tally/money.py" in expand(retype.writes, FILES)
    assert _clashes(resolved, FILES) == []


def test_tasks_sharing_most_of_both_write_sets_are_merged() -> None:
    plan = _plan(
        _task("split-rules", ["tally/split.py", "tally/money.py"], provides=["Rounding"]),
        _task("rounding", ["tally/split.py", "tally/money.py", "tally/settle.py"], reads=["tally/ledger.py"]),
        _task("docs", ["README.md"], depends_on=["rounding"], consumes=["Rounding"]),
        contracts=[{"name": "Rounding", "signature": "def round_cents(x: Decimal) -> Decimal", "owner": "split-rules"}],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)

    assert [(d.action, d.what) for d in decisions] == [
        ("order", "docs wait for split-rules"),  # Rounding has no path for a stub: its lone consumer waits
        ("merge", "merged rounding into split-rules"),
    ]
    assert [t.id for t in resolved.tasks] == ["split-rules", "docs"]
    merged = resolved.task("split-rules")
    assert merged.writes == ["tally/split.py", "tally/money.py", "tally/settle.py"]
    assert merged.reads == ["tally/ledger.py"] and merged.title == "do split-rules; do rounding"
    assert "Do split-rules." in merged.instructions and "merged in from task rounding" in merged.instructions
    assert resolved.task("docs").depends_on == ["split-rules"]
    assert validate_plan(resolved) == []


def test_merging_down_to_one_task_makes_the_plan_single() -> None:
    plan = _plan(_task("a", ["tally/split.py"]), _task("b", ["tally/split.py"]))
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert [d.action for d in decisions] == ["merge"]
    assert resolved.mode == "single" and len(resolved.tasks) == 1 and validate_plan(resolved) == []


def test_a_task_whose_write_set_is_mostly_shared_goes_first_when_it_writes_less() -> None:
    plan = _plan(
        _task("storage-format", ["tally/storage.py", "tally/ledger.py", "tally/report.py", "tests/test_report.py"]),
        _task("ledger-field", ["tally/ledger.py"]),
    )
    resolved, decisions = resolve_overlaps(plan, FILES)

    assert [(d.action, d.what) for d in decisions] == [("order", "storage-format runs after ledger-field")]
    assert "most of ledger-field's write-set is shared" in decisions[0].why
    assert resolved.task("storage-format").depends_on == ["ledger-field"]
    assert resolved.task("storage-format").writes == plan.task("storage-format").writes
    assert _clashes(resolved, FILES) == []


def test_a_provider_goes_before_a_consumer_it_clashes_with() -> None:
    plan = _plan(
        _task("report", ["tally/report.py", "tests/test_report.py", "tally/cli.py"], consumes=["Money"]),
        _task("currency", ["tally/money.py", "tests/test_money.py", "tally/cli.py"], provides=["Money"]),
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert [(d.action, d.tasks) for d in decisions] == [("order", ("currency", "report"))]
    assert decisions[0].why == "1 task consumes Money, which has no path to write a stub in, so it waits for its owner"
    assert resolved.task("report").depends_on == ["currency"]


def test_tasks_already_in_order_may_write_the_same_file() -> None:
    plan = _plan(
        _task("a", ["tally/cli.py"]),
        _task("b", ["tally/money.py"], depends_on=["a"]),
        _task("c", ["tally/cli.py"], depends_on=["b"]),
    )
    assert resolve_overlaps(plan, FILES) == (plan, [])


def test_new_files_clash_with_a_glob_that_covers_them() -> None:
    plan = _plan(
        _task("plugins", ["tally/plugins/**", "tally/ledger.py", "tally/split.py"]),
        _task("csv", ["tally/plugins/csv.py", "tally/storage.py", "tally/report.py"]),
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert [(d.action, d.files, d.tasks) for d in decisions] == [
        ("assign", ("tally/plugins/csv.py",), ("csv", "plugins"))
    ]
    assert resolved.task("plugins").writes[-1] == "!tally/plugins/csv.py"


def test_an_interface_two_tasks_consume_is_written_first_by_a_contract_task() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py", "tests/test_money.py"], provides=["Money"], depends_on=["setup"]),
        _task("report", ["tally/report.py"], consumes=["Money"], depends_on=["setup"]),
        _task("storage", ["tally/storage.py"], consumes=["Money"], depends_on=["setup"]),
        _task("setup", ["README.md"]),
        contracts=[
            {
                "name": "Money",
                "signature": "class Money:\n    amount: Decimal\n    currency: str",
                "owner": "currency",
                "path": "tally/money.py",
            }
        ],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)

    assert [(d.action, d.tasks) for d in decisions] == [
        ("contract", ("contract-money", "currency", "report", "storage"))
    ]
    stub = resolved.tasks[0]
    assert stub.id == "contract-money" and stub.kind == "contract" and stub.writes == ["tally/money.py"]
    assert stub.depends_on == ["setup"] and "currency: str" in stub.instructions
    # a name the file already has keeps its working body: the stub is not told to make it raise as well
    assert "A new name gets a body that raises NotImplementedError" in stub.instructions
    assert "keeps its working body" in stub.instructions
    for task_id in ("currency", "report", "storage"):
        assert resolved.task(task_id).depends_on == ["setup", "contract-money"]
    assert validate_plan(resolved) == [] and _clashes(resolved, FILES) == []
    order = [t.id for t in topological_order(resolved)]
    assert order.index("setup") < order.index("contract-money") < order.index("currency")
    assert resolve_overlaps(resolved, FILES) == (resolved, [])


def test_a_consumer_building_on_a_stub_need_not_wait_for_the_provider() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py", "tests/test_money.py", "tally/cli.py"], provides=["Money"]),
        _task("csv", ["tally/storage.py", "tally/cli.py", "tests/test_storage.py"], consumes=["Money"]),
        _task("report", ["tally/report.py"], consumes=["Money"]),
        contracts=[{"name": "Money", "signature": "class Money", "owner": "currency", "path": "tally/money.py"}],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert [d.action for d in decisions] == ["contract", "assign"]
    assert resolved.task("csv").depends_on == ["contract-money"]
    assert resolved.task("csv").writes == ["tally/storage.py", "tests/test_storage.py"]


def test_contracts_in_the_same_file_share_one_contract_task() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py"], provides=["Money", "Rate"]),
        _task("report", ["tally/report.py"], consumes=["Money", "Rate"]),
        _task("storage", ["tally/storage.py"], consumes=["Money", "Rate"]),
        contracts=[
            {"name": "Money", "signature": "class Money: ...", "owner": "currency", "path": "tally/money.py"},
            {
                "name": "Rate",
                "signature": "def rate(code: str) -> Decimal",
                "owner": "currency",
                "path": "./tally/money.py",
            },
        ],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)

    assert [d.what for d in decisions] == [
        "added task contract-money, which writes the Money stub in tally/money.py first; "
        "currency, report, storage start from its commit",
        "task contract-money also writes the Rate stub in tally/money.py; "
        "currency, report, storage start from its commit",
    ]
    stub = resolved.task("contract-money")
    assert stub.provides == ["Money", "Rate"] and stub.title == "Write the Money, Rate interfaces as a stub"
    assert stub.instructions.startswith(
        "In tally/money.py, write exactly as declared:\n\nMoney:\nclass Money: ...\n\nRate:\ndef rate(code: str)"
    )
    assert "Task(s) currency implement it; task(s) report, storage build on your stub" in stub.instructions
    assert [t.id for t in resolved.tasks] == ["contract-money", "currency", "report", "storage"]
    assert validate_plan(resolved) == [] and resolve_overlaps(resolved, FILES) == (resolved, [])


def test_without_a_path_for_the_stub_the_consumers_wait_for_the_owner() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py"], provides=["Money"]),
        _task("report", ["tally/report.py"], consumes=["Money"]),
        _task("storage", ["tally/storage.py"], consumes=["Money"]),
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert [(d.action, d.what) for d in decisions] == [("order", "report, storage wait for currency")]
    assert resolved.task("report").depends_on == resolved.task("storage").depends_on == ["currency"]


def test_a_lone_consumer_running_beside_its_provider_builds_on_a_stub() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py"], provides=["Money"]),
        _task("report", ["tally/report.py"], consumes=["Money"]),
        contracts=[{"name": "Money", "signature": "class Money", "owner": "currency", "path": "tally/money.py"}],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert [t.id for t in resolved.tasks][0] == "contract-money"
    assert "contract-money" in resolved.task("report").depends_on
    assert validate_plan(resolved) == []


def test_a_lone_consumer_already_after_its_provider_needs_no_stub() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py"], provides=["Money"]),
        _task("report", ["tally/report.py"], consumes=["Money"], depends_on=["currency"]),
        contracts=[{"name": "Money", "signature": "class Money", "owner": "currency", "path": "tally/money.py"}],
    )
    assert resolve_overlaps(plan, FILES) == (plan, [])


def test_the_input_plan_is_not_changed() -> None:
    plan = _plan(
        _task("a", ["tally/cli.py", "tally/money.py", "tally/split.py"]), _task("b", ["tally/cli.py", "x.py", "y.py"])
    )
    before = plan.model_dump()
    resolve_overlaps(plan, FILES)
    assert plan.model_dump() == before


def _random_plan(rng: random.Random, patterns: list[str]) -> Plan:
    tasks = []
    for i in range(rng.randint(2, 9)):
        deps = [f"t{j}" for j in range(i) if rng.random() < 0.15]
        tasks.append(_task(f"t{i}", rng.sample(patterns, rng.randint(1, 4)), depends_on=deps))
    contracts = []
    for k in range(rng.randint(0, 3)):
        owner, *users = rng.sample(tasks, rng.randint(1, len(tasks)))
        owner["provides"] = [*owner.get("provides", []), f"C{k}"]
        for user in users:
            user["consumes"] = [*user.get("consumes", []), f"C{k}"]
        path = rng.choice(["", "pkg/m1.py", "pkg/api.py"])
        contracts.append({"name": f"C{k}", "signature": f"def c{k}() -> None", "owner": owner["id"], "path": path})
    return _plan(*tasks, contracts=contracts)


def test_random_plans_always_come_out_valid_without_clashes() -> None:
    files = [f"pkg/m{i}.py" for i in range(30)] + [f"tests/test_m{i}.py" for i in range(30)]
    patterns = [*files[:30], "pkg/*.py", "pkg/m1*.py", "tests/**", "pkg/new.py"]
    seen: set[str] = set()
    for seed in range(80):
        plan = _random_plan(random.Random(seed), patterns)
        resolved, decisions = resolve_overlaps(plan, files)
        seen |= {d.action for d in decisions}
        assert validate_plan(resolved) == [], seed
        assert _clashes(resolved, files) == [], seed
        assert resolve_overlaps(resolved, files)[1] == [], seed
        assert resolve_overlaps(plan, files) == (resolved, decisions), seed
    assert seen == {"order", "merge", "assign", "contract"}


def test_decisions_become_events_and_are_shown_with_the_plan() -> None:
    plan = _plan(
        _task("currency", ["tally/money.py", "tests/test_money.py", "tally/cli.py"], provides=["Money"]),
        _task("report", ["tally/report.py", "tests/test_report.py", "tally/cli.py"]),
        contracts=[{"name": "Money", "signature": "class Money", "owner": "currency", "path": "tally/money.py"}],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    event = decisions[0].event("run-1")
    assert event.topic == "overlap" and event.decision == decisions[0].what and event.reason == decisions[0].why
    assert event.data == {"action": "assign", "tasks": ["currency", "report"], "files": ["tally/cli.py"]}

    console = Console(record=True, width=140)
    console.print(render_plan(resolved, decisions))
    shown = console.export_text()
    assert "Plan: parallel, 2 task(s). independent parts" in shown
    assert "currency" in shown and "tally/report.py, tests/test_report.py" in shown
    assert "Money (by currency) in tally/money.py: class Money" in shown
    assert "assign tally/cli.py goes to currency; report must not edit it" in shown

    text = describe_plan(resolved)
    assert "- report: do report\n  writes: tally/report.py, tests/test_report.py\n" in text
    assert "- Money in tally/money.py, implemented by currency:\n    class Money\n" in text
    assert "Do report." not in text


def test_a_decision_is_plain_data() -> None:
    decision = OverlapDecision("order", ("a", "b"), ("x.py",), "b runs after a", "why")
    assert decision.event("r").data["action"] == "order"


def test_write_set_patterns() -> None:
    files = ["a.py", "src/a.py", "src/b.txt", "src/deep/c.py", "src2/x.py", "docs/guide.md"]
    assert expand(["*.py"], files) == {"a.py", "src/a.py", "src/deep/c.py", "src2/x.py"}
    assert expand(["src/*.py"], files) == {"src/a.py"}
    assert expand(["src/**/*.py"], files) == {"src/a.py", "src/deep/c.py"}
    assert expand(["src/**"], files) == expand(["src/"], files) == expand(["./src"], files)
    assert expand(["src"], files) == {"src/a.py", "src/b.txt", "src/deep/c.py"}
    assert expand(["src/**", "!src/deep/**", "!*.txt"], files) == {"src/a.py"}
    assert expand(["src[2]/?.py", "docs/[!x]uide.md"], files) == {"src2/x.py", "docs/guide.md"}
    assert expand(["new/file.py"], files) == set()
    assert matches(["src/new/**"], "src/new/x.py") and not matches(["src/new/**", "!src/new/x.py"], "src/new/x.py")


@pytest.mark.parametrize(
    "signature",
    ["strip_semicolon: bool keyword of format(), default False", "--semicolon flag of the CLI", "JSON: {id, name}"],
)
def test_a_contract_that_declares_no_code_gets_no_stub_task(signature: str) -> None:
    """A flag, a data shape or a format has nothing to import: a stub of it would only make tasks wait, or break
    the function it names with NotImplementedError."""
    plan = _plan(
        _task("lib", ["pkg/formatter.py"], provides=["strip_semicolon"]),
        _task("cli", ["pkg/cli.py"], consumes=["strip_semicolon"]),
        _task("docs", ["docs/usage.rst"], consumes=["strip_semicolon"]),
        contracts=[{"name": "strip_semicolon", "signature": signature, "owner": "lib", "path": "pkg/formatter.py"}],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert decisions == [] and [t.kind for t in resolved.tasks] == ["work", "work", "work"]
    assert all(t.depends_on == [] for t in resolved.tasks)


@pytest.mark.parametrize("signature", ["def round_cents(x: Decimal) -> Decimal", "export_csv(ledger, path) -> None"])
def test_a_contract_that_declares_code_still_gets_its_stub_task(signature: str) -> None:
    plan = _plan(
        _task("lib", ["pkg/money.py"], provides=["f"]),
        _task("a", ["pkg/a.py"], consumes=["f"]),
        _task("b", ["pkg/b.py"], consumes=["f"]),
        contracts=[{"name": "f", "signature": signature, "owner": "lib", "path": "pkg/money.py"}],
    )
    resolved, decisions = resolve_overlaps(plan, FILES)
    assert [d.action for d in decisions] == ["contract"] and resolved.tasks[0].kind == "contract"
