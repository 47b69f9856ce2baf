from __future__ import annotations

from pathlib import Path

import pytest

from plait.errors import UsageError
from plait.plan import load_plan


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def test_a_full_plan_loads_as_written(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
mode: parallel
reason: The two features touch different modules.
tasks:
  - id: currency
    title: Add a currency to Money
    instructions: |
      Give Money a currency field.
      Add tests.
    writes: [tally/money.py, tests/test_money.py]
    provides: [Money]
  - id: csv
    title: Export CSV
    instructions: Add tally/export.py.
    writes: tally/export.py
    consumes: [Money]
    depends_on: [currency]
contracts:
  - name: Money
    signature: "class Money: amount: Decimal; currency: str"
    owner: currency
    path: tally/money.py
""",
    )
    plan = load_plan(path)
    assert plan.mode == "parallel" and plan.reason == "The two features touch different modules."
    assert plan.task("currency").instructions == "Give Money a currency field.\nAdd tests.\n"
    assert plan.task("csv").writes == ["tally/export.py"] and plan.task("csv").depends_on == ["currency"]
    assert plan.contracts[0].owner == "currency"


def test_friendly_defaults_fill_in_ids_mode_reason_and_instructions(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
tasks:
  - title: Add a currency to Money
    writes: [tally/money.py]
  - Export the ledger as CSV
  - instructions: "Export the ledger as CSV\\nbut to a different folder"
  - id: export-the-ledger-as-csv-2
    title: taken id
""",
    )
    plan = load_plan(path)
    assert [t.id for t in plan.tasks] == [
        "add-a-currency-to-money",
        "export-the-ledger-as-csv",
        "export-the-ledger-as-csv-3",
        "export-the-ledger-as-csv-2",
    ]
    assert plan.mode == "parallel" and plan.reason == "written by hand in plan.yaml"
    assert plan.tasks[0].instructions == "Add a currency to Money"
    assert plan.tasks[1].title == plan.tasks[1].instructions == "Export the ledger as CSV"
    assert plan.tasks[2].title == "Export the ledger as CSV"


def test_a_bare_list_with_one_task_is_a_single_plan(tmp_path: Path) -> None:
    plan = load_plan(_write(tmp_path, "- Fix the rounding bug in split.py\n"))
    assert plan.mode == "single" and plan.tasks[0].id == "fix-the-rounding-bug-in-split-py"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tasks: [", "plan.yaml is not valid YAML at line 1: expected the node content"),
        ("just words", "plan.yaml: a plan is a mapping with a 'tasks' list, or a list of tasks"),
        ("mode: single\n", "plan.yaml: tasks must be a non-empty list of tasks"),
        ("tasks:\n  - title: A\n    write: [a.py]\n", "plan.yaml: tasks[0].write is not a known field"),
        (
            "tasks:\n  - title: A\n    writes: {a: 1}\n",
            "plan.yaml: tasks[0].writes: Input should be a valid list (got {'a': 1})",
        ),
        ("tasks:\n  - A\n  - B\nmode: serial\n", "plan.yaml: mode: Input should be 'single' or 'parallel'"),
        (
            "tasks:\n  - {title: A, depends_on: [b]}\n  - {title: B, depends_on: [a]}\n",
            "plan.yaml: the dependencies form a cycle: a -> b -> a",
        ),
        (
            "tasks:\n  - {title: A, depends_on: [nope]}\n  - {title: B, id: Bad}\n",
            "plan.yaml: task 'a' depends on 'nope', which is not a task of the plan (and 1 more problem(s))",
        ),
        ("tasks:\n  - {id: a}\n", "plan.yaml: tasks[0].title is missing (and 1 more problem(s))"),
    ],
)
def test_a_broken_plan_is_one_line_naming_the_file_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        load_plan(_write(tmp_path, text))
    shown = str(caught.value).replace(str(tmp_path) + "/", "")
    assert shown.startswith(message) and "\n" not in shown and caught.value.exit_code == 2


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"cannot read the plan .*nope\.yaml: No such file or directory"):
        load_plan(tmp_path / "nope.yaml")
