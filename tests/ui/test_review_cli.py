"""`plait review` and `plait apply --squash/--pick/--dry-run` through the real CLI, on the real demo run.

Each test works on its own copy of one demo run (`demo`, from the conftest): a real 4-task parallel run where
csv-export merged percent-split's integrated work in for a claim.
"""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait, git

from plait.reconcile.queue import TaskBranch
from plait.run.review import needed_by, taken_along
from plait.workspace import Repo

TASKS = {"csv-export", "percent-split", "storage-errors", "remove-expense"}


def _files(where: Path, ref: str) -> set[str]:
    return set(git(where, "ls-tree", "-r", "--name-only", ref).splitlines())


def test_review_shows_each_task_against_the_base_and_the_head(plait: Plait, demo: tuple[Path, str]) -> None:
    where, run_id = demo
    data = plait("review", "last", "--json", cwd=where).json()
    assert data["run_id"] == run_id and data["branch"] == f"plait/{run_id}/integration"
    tasks = {t["id"]: t for t in data["tasks"]}
    assert set(tasks) == TASKS
    assert all(t["in_result"] and t["gate"] == "passed" and t["cost"] == "unpriced" for t in tasks.values())
    assert all(t["summary"] and t["diffstat_base"] and t["diff_base"] == "" for t in tasks.values())
    # remove-expense and storage-errors both add to CHANGELOG.md and finish at about the same time: whichever lands
    # second needs the deterministic rung, and which one that is depends on the machine's timing
    second = [t for t in ("remove-expense", "storage-errors") if tasks[t]["merged_by"] != "git"]
    assert len(second) == 1 and tasks[second[0]]["merged_by"] == "deterministic (1 file(s))"
    assert tasks[second[0]]["merge_steps"][0] == "git conflict (CHANGELOG.md)"
    assert tasks["percent-split"]["merged_by"] == "git" and tasks["percent-split"]["since"] == data["base"]
    # its own work starts where it merged the integrated work in, not at the base
    export = tasks["csv-export"]
    assert export["since"] != data["base"] and "tally/split.py" not in export["files"]
    assert {"tally/export.py", "tally/money.py"} <= set(export["files"]) and export["diffstat_head"] == ""
    # csv-export later changed money.py, which percent-split also wrote: the head differs from its branch there
    assert "tally/money.py" in tasks["percent-split"]["diffstat_head"]

    text = plait("review", run_id[:12], cwd=where)
    assert text.code == 0, text.err
    for line in ("merged by", "deterministic", "unpriced", "against the base", "its files are as on its branch"):
        assert line in text.out
    patch = plait("review", "last", "--diff", cwd=where)
    assert "+++ b/tally/export.py" in patch.out and "+++ b/tally/export.py" not in text.out


def test_drop_integrates_the_rest_again_and_takes_along_what_holds_its_work(
    plait: Plait, demo: tuple[Path, str]
) -> None:
    where, run_id = demo
    unknown = plait("review", "last", "--drop", "nosuch", cwd=where)
    assert unknown.code == 2 and "has no task nosuch" in unknown.err and len(unknown.err.strip().splitlines()) == 1

    result = plait("review", "last", "--drop", "percent-split", "--no-llm", "--json", cwd=where)
    assert result.code == 0, result.err
    data = result.json()
    assert data["dropped"]["percent-split"] == "asked for"
    assert "holds percent-split's work" in data["dropped"]["csv-export"]
    assert data["branch"] == f"plait/{run_id}/integration-2" and data["ejected"] == []
    tasks = {t["id"]: t for t in data["tasks"]}
    assert {t for t in TASKS if tasks[t]["in_result"]} == {"storage-errors", "remove-expense"}
    files = _files(where, data["branch"])
    assert "tests/test_remove_expense.py" in files and "tests/test_storage_errors.py" in files
    assert "tests/test_percent.py" not in files and "tests/test_export.py" not in files
    # the first result is untouched; status and apply take the new one
    assert "tests/test_percent.py" in _files(where, f"plait/{run_id}/integration")
    status = plait("status", "--json", cwd=where).json()
    assert status["branch"] == data["branch"]
    line = next(x for x in plait("status", cwd=where).out.splitlines() if x.startswith("integration "))
    assert "integration-2" in line and "percent-split" not in line and "remove-expense" in line
    assert plait("apply", "last", cwd=where).code == 0
    assert git(where, "rev-parse", "HEAD") == git(where, "rev-parse", data["branch"])


def test_a_plan_dependant_goes_with_the_task_and_a_pick_takes_what_it_needs(project: Path) -> None:
    repo = Repo.discover(project)
    head = git(project, "rev-parse", "HEAD")
    tasks = [TaskBranch("a", "", head), TaskBranch("b", "", "", depends_on=("a",)), TaskBranch("c", "", "")]
    assert taken_along(repo, tasks, ["a"]) == {"a": "asked for", "b": "depends on a (plan)"}
    assert needed_by(repo, tasks, ["b"]) == {"b": "asked for", "a": "b depends on a (plan)"}


def test_apply_dry_run_then_squash_lands_one_commit_by_the_user(plait: Plait, demo: tuple[Path, str]) -> None:
    where, run_id = demo
    base = git(where, "rev-parse", "HEAD")
    dry = plait("apply", "last", "--squash", "--dry-run", cwd=where)
    assert dry.code == 0, dry.err
    assert "by squash; nothing changed" in dry.out and "tally/export.py" in dry.out and "Test <test@" in dry.out
    assert git(where, "rev-parse", "HEAD") == base and git(where, "status", "--porcelain") == ""

    result = plait("apply", "last", "--squash", cwd=where)
    assert result.code == 0, result.err
    assert git(where, "rev-list", f"{base}..HEAD").count("\n") == 0
    assert git(where, "log", "-1", "--format=%an <%ae>|%cn") == "Test <test@example.invalid>|Test"
    message = git(where, "log", "-1", "--format=%B")
    assert message.startswith("Get tally ready for its 0.4 release")
    assert all(f"- {task}: " in message for task in TASKS) and f"plait run {run_id}" in message
    assert "Remove an expense from a ledger" in message and "tests/test_export.py" in _files(where, "HEAD")


def test_apply_pick_brings_in_only_those_tasks(plait: Plait, demo: tuple[Path, str]) -> None:
    where, run_id = demo
    result = plait("apply", "last", "--pick", "remove-expense", "--no-llm", cwd=where)
    assert result.code == 0, result.err
    assert "picked remove-expense: asked for" in result.out
    files = _files(where, "HEAD")
    assert "tests/test_remove_expense.py" in files and "tests/test_percent.py" not in files
    assert "tests/test_export.py" not in files and "tests/test_storage_errors.py" not in files
    assert git(where, "rev-parse", "HEAD") == git(where, "rev-parse", f"plait/{run_id}/integration-2")


def test_apply_never_lands_plait_internal_commits(plait: Plait, project: Path) -> None:
    """A result whose history holds a checkpoint lands as one commit of the user's, and says so."""
    base = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "-b", "work")
    (project / "greet.py").write_text('def greet(name):\n    return "hi " + name\n')
    git(project, "commit", "-qam", "plait checkpoint")
    (project / "greet.py").write_text('def greet(name):\n    return "hi, " + name\n')
    git(project, "commit", "-qam", "Say hi")
    git(project, "checkout", "-q", "main")
    run = plait("integrate", "work", "--no-llm", "--json", cwd=project)
    assert run.code == 0, run.err
    result = plait("apply", "last", cwd=project)
    assert result.code == 0, result.err
    assert "internal commit(s) of plait: landing it as one commit" in result.err
    assert git(project, "log", "--format=%s", f"{base}..HEAD") == "integrate work"
    assert (project / "greet.py").read_text().endswith('"hi, " + name\n')
