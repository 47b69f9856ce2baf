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
