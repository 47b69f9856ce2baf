from __future__ import annotations

from pathlib import Path

from cli_support import Plait, git


def test_demo_runs_the_scripted_agent_to_a_committed_tested_change(plait: Plait, tmp_path: Path) -> None:
    where = tmp_path / "demo"
    result = plait("demo", "--single", "--fast", "--json", "--dir", str(where), cwd=tmp_path)
    assert result.code == 0, result.err
    data = result.json()
    assert data["status"] == "done" and data["steps"] == 18
    assert {"tally/money.py", "tally/ledger.py", "tests/test_currency.py"} <= set(data["files"])
    assert git(where, "status", "--porcelain") == ""
    assert "currency" in git(where, "show", f"{data['branch']}:tally/ledger.py")

    shown = plait("show", "last", cwd=where)
    assert shown.code == 0 and "79 passed" in shown.out
    again = plait("demo", "--fast", "--dir", str(where), cwd=tmp_path)
    assert again.code == 2 and "is not empty" in again.err


def test_the_parallel_demo_plans_runs_agents_at_once_and_integrates_them(plait: Plait, tmp_path: Path) -> None:
    import json

    where = tmp_path / "pdemo"
    result = plait("demo", "--fast", "--json", "--dir", str(where), cwd=tmp_path)
    assert result.code == 0, result.err
    data = result.json()
    assert data["status"] == "done" and data["branch"].endswith("/integration")
    assert {t: v["status"] for t, v in data["tasks"].items()} == {
        "csv-export": "done",
        "percent-split": "done",
        "storage-errors": "done",
        "remove-expense": "done",
    }
    events = [json.loads(line) for line in plait("log", "last", "--json", cwd=where).out.splitlines()]
    merges = [e for e in events if e["kind"] == "merge"]
    # csv-export waited for percent-split's tally/money.py and edited on top of its work: no conflict there
    leases = {(e["agent"], e["action"], e["path"]) for e in events if e["kind"] == "lease"}
    assert {("csv-export", "wait", "tally/money.py"), ("csv-export", "update", "tally/money.py")} <= leases
    assert not any("tally/money.py" in e["files"] for e in merges)
    # the two changelog lines written at the same time are reconciled at integration
    resolved = [(e["rung"], e["files"]) for e in merges if e["outcome"] == "resolved"]
    assert resolved == [("deterministic", ["CHANGELOG.md"])]
    assert all(e["passed"] for e in events if e["kind"] == "gate")
    tree = git(where, "ls-tree", "-r", "--name-only", data["branch"])
    for path in ("tests/test_export.py", "tests/test_percent.py", "tests/test_remove_expense.py"):
        assert path in tree
