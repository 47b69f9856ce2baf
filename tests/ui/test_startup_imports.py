"""A read-only command imports what it uses: never the terminal UI, a provider's SDK, MCP, a database server's
driver, the distributed backend, the merge machinery, the sandbox or the run loop, which only a run (or the live
view) needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import git
from synthetic_run import RUN_ID, append_run, parallel_run

from plait.events.store import SQLiteEventStore

FORBIDDEN = (
    "textual",
    "openai",
    "anthropic",
    "psycopg",
    "ray",
    "mcp",
    "httpx",
    "plait.reconcile",
    "plait.workspace.sandbox",
    "plait.models.scripted",
    "plait.run",
    "plait.agent",
    "plait.cli.cmd_run",
    "ctypes",  # only where a layered worktree is mounted or taken away
)
# the progress lines' few string helpers; `config` shows the test command the gate would detect
ALLOWED = {"plait.reconcile", "plait.reconcile.verdict"}
ALLOWED_FOR = {"config": {"plait.reconcile.verify"}}

_PROBE = """
import json, sys
from plait.cli import main
code = main(sys.argv[1:])
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _imported(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def _forbidden(modules: set[str], allowed: set[str]) -> list[str]:
    return sorted(m for m in modules - allowed if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))


@pytest.fixture
def recorded(project: Path) -> Path:
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    append_run(store, parallel_run(base=git(project, "rev-parse", "HEAD")))
    store.close()
    return project


@pytest.mark.parametrize(
    "argv",
    [
        ["runs"],
        ["runs", "--json"],
        ["status", "--json"],
        ["status", "--plain"],
        ["show", "last", "--no-pager"],
        ["log", RUN_ID],
        ["cost", "last"],
        ["config"],
        ["--help"],
        ["--version"],
    ],
    ids=" ".join,
)
def test_a_read_only_command_imports_no_run_machinery(recorded: Path, env: dict[str, str], argv: list[str]) -> None:
    code, modules = _imported(argv, recorded, env)
    assert code == 0
    assert _forbidden(modules, ALLOWED | ALLOWED_FOR.get(argv[0], set())) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["runs"],
        ["runs", "--json"],
        ["status", "--json"],
        ["show", "last", "--no-pager"],
        ["log", RUN_ID, "--agent", "money"],
        ["cost", "last"],
        ["--help"],
        ["--version"],
    ],
    ids=" ".join,
)
def test_a_read_only_command_with_plain_options_starts_without_typer(
    recorded: Path, env: dict[str, str], argv: list[str]
) -> None:
    """typer builds every parameter with pydantic: the read-only commands read their few options themselves, and
    none of them imports the settings' models (and the command runner, and asyncio, with them) when nothing is set."""
    code, modules = _imported(argv, recorded, env)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in ("typer", "click", "asyncio")) == []
    assert sorted(m for m in modules if m.startswith(("plait.settings", "plait.workspace.command"))) == []


def test_the_run_list_reads_the_log_without_the_event_models(recorded: Path, env: dict[str, str]) -> None:
    code, modules = _imported(["runs"], recorded, env)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")) == []
    assert sorted(m for m in modules if m.startswith(("plait.events", "plait.messages", "plait.models.pricing"))) == []


@pytest.mark.parametrize("argv", [["log", "last"], ["log", RUN_ID, "--agent", "money"]], ids=" ".join)
def test_the_log_reads_the_rows_without_the_event_models_or_rich(
    recorded: Path, env: dict[str, str], argv: list[str]
) -> None:
    """`plait log` prints plain lines: neither pydantic and the event models nor rich's console."""
    code, modules = _imported(argv, recorded, env)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core", "rich")) == []
    assert sorted(m for m in modules if m.startswith(("plait.events", "plait.models", "plait.ui.runview"))) == []


@pytest.mark.parametrize(
    "argv",
    [["status", "--json"], ["status", "--plain"], ["cost", "last"], ["cost", "last", "--json"], ["show", "last"]],
    ids=" ".join,
)
def test_status_cost_and_show_read_the_rows_without_pydantic_or_pygments(
    recorded: Path, env: dict[str, str], argv: list[str]
) -> None:
    """They fold the rows read as plain objects and price them with the plain rule; `show` colours a call's
    arguments without pygments."""
    code, modules = _imported(argv, recorded, env)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core", "pygments")) == []
    models = ("plait.events", "plait.messages", "plait.plan_model", "plait.models.pricing", "rich.syntax")
    assert sorted(m for m in modules if m.startswith(models)) == []


@pytest.mark.parametrize(
    "argv",
    [["runs"], ["status"], ["status", "--plain"], ["cost", "last"], ["status", "--json"], ["show", "last"]],
    ids=" ".join,
)
def test_what_is_written_to_a_pipe_is_drawn_without_richs_console(
    recorded: Path, env: dict[str, str], argv: list[str]
) -> None:
    """Unstyled, rich's console, tables, panels and text cost more to import than these commands do otherwise: the
    plain page draws the same bytes (`plait.ui._plain`)."""
    code, modules = _imported(argv, recorded, env)
    assert code == 0
    drawing = {"rich.console", "rich.table", "rich.panel", "rich.text", "rich.markup", "rich.style"}
    assert sorted(modules & drawing) == []


def test_the_version_imports_nothing_but_itself(recorded: Path, env: dict[str, str]) -> None:
    code, modules = _imported(["--version"], recorded, env)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in ("rich", "pydantic", "pydantic_core")) == []


def test_the_top_level_help_imports_no_command_module(recorded: Path, env: dict[str, str]) -> None:
    code, modules = _imported(["--help"], recorded, env)
    assert code == 0
    assert sorted(m for m in modules if m.startswith(("plait.cli.cmd_", "plait.events", "plait.settings"))) == []


def test_the_top_level_help_is_drawn_without_typers_rich_toolkit(recorded: Path, env: dict[str, str]) -> None:
    code, modules = _imported(["--help"], recorded, env)
    assert code == 0
    assert sorted(modules & {"typer.rich_utils", "rich.markdown", "rich.syntax", "rich.traceback"}) == []


def test_the_run_commands_import_no_sdk_before_they_need_one() -> None:
    """`plait run` and `plait resume`: a provider's SDK is imported at the first model call, MCP's when a server
    starts; a resume replays its logged calls without either."""
    probe = "import json, sys, plait.cli.cmd_run; print(json.dumps(sorted(sys.modules)))"
    modules = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout))
    sdks = ("openai", "anthropic", "mcp", "mcp_types", "textual")
    assert sorted(m for m in modules if m.split(".")[0] in sdks) == []
