"""What a newcomer tripped over, through the real CLI: `-h`, a transcript's diff cut at the terminal's width,
an agent that does not exist taken silently."""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait, git
from synthetic_run import RUN_ID, append_run, parallel_run

from plait.events.store import SQLiteEventStore
from plait.events.types import RunFinished, RunKind, RunStarted

LONG = "    return " + " + ".join(f'"part {i}"' for i in range(20)) + "  # one long line"


def _recorded(project: Path) -> None:
    base = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "-b", f"plait/{RUN_ID}")
    (project / "greet.py").write_text(f"def greet(name):\n{LONG}\n")
    git(project, "commit", "-qam", "long")
    final = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "main")
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    append_run(store, parallel_run(base=base, final=final))
    store.close()


def test_dash_h_is_help_for_plait_and_for_each_command(plait: Plait, project: Path) -> None:
    top, sub = plait("-h", cwd=project), plait("show", "-h", cwd=project)
    assert top.code == 0 and "Usage:" in top.out and "COMMAND" in top.out
    assert sub.code == 0 and "Usage:" in sub.out and " show " in sub.out and "--no-pager" in sub.out


def test_a_transcript_keeps_every_diff_line_whole_at_any_width(plait: Plait, project: Path) -> None:
    assert len(LONG) > 150
    _recorded(project)
    for columns in ("60", "200"):
        shown = plait("show", "last", "--full", cwd=project, extra_env={"COLUMNS": columns})
        assert shown.code == 0, shown.err
        assert f"+{LONG}" in shown.out.splitlines(), f"the diff's line was cut or wrapped at {columns} columns"


def test_an_agent_the_run_does_not_have_is_a_usage_error_naming_the_ones_it_has(plait: Plait, project: Path) -> None:
    _recorded(project)
    for args in (("show", "last", "nosuch"), ("log", "last", "--agent", "nosuch")):
        result = plait(*args, cwd=project)
        assert result.code == 2, (args, result.out, result.err)
        assert "has no agent 'nosuch'" in result.err and "ledger" in result.err
        assert len(result.err.strip().splitlines()) == 1
    assert plait("show", "last", "ledger", cwd=project).code == 0
    assert plait("log", "last", "--agent", "ledger", cwd=project).code == 0


def test_last_means_the_latest_run_the_command_can_act_on(plait: Plait, project: Path) -> None:
    base = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "-b", f"plait/{RUN_ID}/integration")
    (project / "greet.py").write_text('def greet(name):\n    return "hi " + name\n')
    git(project, "commit", "-qam", "hi")
    final = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "main")
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    append_run(store, parallel_run(base=base, final=final))
    later = "20260101-000500-cafe"  # a session after the change: `last` for apply is still the change
    for event in (
        RunStarted(run_id=later, task="chat", repo=str(project), base_commit=base, base_ref="main", model="m"),
        RunKind(run_id=later, decision="session", what="session"),
        RunFinished(run_id=later, status="done"),
    ):
        store.append(event)
    store.close()
    applied = plait("apply", "last", cwd=project)
    assert applied.code == 0, applied.err
    assert RUN_ID in applied.out and git(project, "rev-parse", "HEAD") == final


def test_a_run_in_plain_lines_ends_with_the_gates_verdict_and_the_next_step(plait: Plait, tmp_path: Path) -> None:
    where = tmp_path / "demo"
    result = plait("demo", "--fast", "--no-tui", "--dir", str(where), cwd=tmp_path)
    assert result.code == 0, result.err
    run_id = result.out.split("plait show ", 1)[1].split()[0]
    lines = [line.strip() for line in result.out.splitlines()]
    assert any(line.startswith("gate @") and "verify ✓" in line for line in lines), result.out
    assert f"next: plait review {run_id} (each task's work), then plait apply {run_id}" in lines
