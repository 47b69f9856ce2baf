"""`status`, `log`, `cost`, `report` and `trace` through the real CLI, on a real event log in a real repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import Plait, git
from synthetic_run import ENV_SECRET, FAKE_KEY, RUN_ID, append_run, parallel_run

from plait.events.store import SQLiteEventStore
from plait.events.types import Event, EventAdapter, ModelCallFinished, RunFinished, ToolCalled
from plait.messages import Usage

SECRET_ENV = dict([ENV_SECRET])


def _store(project: Path) -> SQLiteEventStore:
    return SQLiteEventStore(project / ".git" / "plait" / "events.db")


@pytest.fixture
def recorded(project: Path) -> list[Event]:
    """The scripted parallel run in the project's log, its result a real commit on a real branch."""
    base = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "-b", f"plait/{RUN_ID}")
    (project / "greet.py").write_text('def greet(name, currency="EUR"):\n    return "hello " + name\n')
    git(project, "commit", "-qam", "currency")
    final = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "main")
    store = _store(project)
    events = append_run(store, parallel_run(base=base, final=final))
    store.close()
    return events


def _no_secret(text: str) -> None:
    assert FAKE_KEY not in text and ENV_SECRET[1] not in text


def test_status_json_and_plain_text(plait: Plait, project: Path, recorded: list[Event]) -> None:
    result = plait("status", "--json", cwd=project, extra_env=SECRET_ENV)
    assert result.code == 0, result.err
    data = result.json()
    assert data["run_id"] == RUN_ID and data["status"] == "done" and data["plan"] == ["money", "ledger", "cli"]
    agents = {a["id"]: a for a in data["agents"]}
    assert list(agents) == ["planner", "money", "ledger", "cli", "resolver-money"]
    assert agents["cli"]["attempt"] == 2 and agents["cli"]["merge"] == "integrated" and agents["ledger"]["retries"] == 1
    assert [g["passed"] for g in data["gate"]].count(False) == 1 and len(data["merges"]) == 6

    plain = plait("status", RUN_ID[:10], cwd=project, extra_env=SECRET_ENV)
    assert plain.code == 0, plain.err
    for line in ("run 20260101-000000-beef · done", "resolver-money", "gate @", "integration plait/"):
        assert line in plain.out
    _no_secret(plain.out + result.out)


def test_log_streams_every_event_redacted(plait: Plait, project: Path, recorded: list[Event]) -> None:
    result = plait("log", "last", "--json", cwd=project, extra_env=SECRET_ENV)
    assert result.code == 0, result.err
    logged = [EventAdapter.validate_json(line) for line in result.out.splitlines()]
    assert [e.seq for e in logged] == [e.seq for e in recorded]
    assert "DEPLOY_TOKEN=[REDACTED]" in result.out
    text = plait("log", RUN_ID, "--agent", "ledger", cwd=project, extra_env=SECRET_ENV)
    assert text.code == 0 and len(text.out.splitlines()) == sum(1 for e in recorded if e.agent == "ledger")
    assert "→ run command=env | grep KEY; pytest -q" in text.out
    _no_secret(result.out + text.out)


def test_log_follow_tails_a_run_written_by_another_process(project: Path, env: dict[str, str]) -> None:
    events = parallel_run()
    half = len(events) // 2
    store = _store(project)
    append_run(store, events[:half])
    command = [sys.executable, "-m", "plait", "log", RUN_ID, "--json", "--follow", "--interval", "0.05"]
    with subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        first = [proc.stdout.readline() for _ in range(half)]
        assert proc.poll() is None, "it stopped before the run finished"
        append_run(store, events[half:])
        rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    seen = [EventAdapter.validate_json(line) for line in [*first, *rest.splitlines()]]
    assert len(seen) == len(events) and isinstance(seen[-1], RunFinished)


def test_cost_breaks_spending_down_and_adds_up(plait: Plait, project: Path, recorded: list[Event]) -> None:
    result = plait("cost", "last", "--json", cwd=project)
    assert result.code == 0, result.err
    data = result.json()
    responses = [e for e in recorded if isinstance(e, ModelCallFinished)]
    usage = sum((e.response.usage for e in responses), Usage())
    assert data["total"]["calls"] == len(responses) and data["total"]["usage"] == usage.model_dump()
    assert data["total"]["cost_usd"] == pytest.approx(sum(e.cost_usd for e in responses), abs=1e-6)
    for key in ("by_agent", "by_model", "by_phase"):
        assert sum(line["cost_usd"] for line in data[key]) == pytest.approx(data["total"]["cost_usd"], abs=1e-5)
        assert sum(line["calls"] for line in data[key]) == len(responses)
    assert [p["name"] for p in data["by_phase"]] == ["planning", "work", "reconciliation"]
    assert {m["name"] for m in data["by_model"]} == {"anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5"}
    saved = sum(e.response.usage.cached_tokens for e in responses if "sonnet" in e.response.model) * 2.7 / 1e6
    assert data["total"]["cache_saved_usd"] == pytest.approx(saved, abs=1e-6)
    time = data["time"]
    assert time["wall_s"] == pytest.approx(53.3, abs=0.01) and time["speedup"] > 1
    assert time["sequential_s"] == pytest.approx(sum(time["busy_s"].values()), abs=0.01)

    text = plait("cost", RUN_ID, cwd=project)
    assert text.code == 0 and "by phase" in text.out and "reconciliation" in text.out and "speed-up" in text.out


def test_report_writes_one_html_file_with_the_diffstat(plait: Plait, project: Path, recorded: list[Event]) -> None:
    target = project.parent / "out" / "report.html"
    result = plait("report", "last", "--html", "-o", str(target), cwd=project, extra_env=SECRET_ENV)
    assert result.code == 0, result.err
    assert result.out.strip() == str(target)
    html = target.read_text()
    assert "greet.py | 2 +-" in html and html.count('class="step tool"') == sum(
        isinstance(e, ToolCalled) for e in recorded
    )
    _no_secret(html)
    default = plait("report", "last", "--html", cwd=project)
    assert default.code == 0 and Path(default.out.strip()) == project / ".git" / "plait" / "reports" / f"{RUN_ID}.html"
    summary = plait("report", "last", cwd=project)
    assert summary.code == 0 and "done run 20260101-000000-beef" in summary.out and "speed-up" in summary.out


def test_trace_prints_spans(plait: Plait, project: Path, recorded: list[Event]) -> None:
    result = plait("trace", "last", cwd=project)
    assert result.code == 0, result.err
    spans = [json.loads(line) for line in result.out.splitlines()]
    assert spans[0]["name"] == "plait run"
    chats = [s for s in spans if s["name"].startswith("chat ")]
    assert len(chats) == sum(isinstance(e, ModelCallFinished) for e in recorded)
    assert all("gen_ai.usage.input_tokens" in s["attributes"] for s in chats)


def test_views_of_the_real_demo_run(plait: Plait, demo: tuple[Path, str]) -> None:
    where, run_id = demo
    events = SQLiteEventStore(where / ".git" / "plait" / "events.db").events(run_id)
    status = plait("status", "--json", cwd=where).json()
    assert status["run_id"] == run_id and status["model_calls"] == sum(isinstance(e, ModelCallFinished) for e in events)
    acting = {e.agent for e in events if e.agent and e.kind not in ("note", "policy")}  # not the gate, the queue
    assert {a["id"] for a in status["agents"]} == acting and {"gate", "merge-queue"} <= {e.agent for e in events}
    cost = plait("cost", "--json", "last", cwd=where).json()
    assert cost["total"]["calls"] == status["model_calls"]
    report = plait("report", "last", "--html", cwd=where)
    html = Path(report.out.strip()).read_text()
    assert html.count('class="step tool"') == sum(isinstance(e, ToolCalled) for e in events)


def test_errors_are_one_line(plait: Plait, project: Path) -> None:
    empty = plait("status", cwd=project)
    assert empty.code == 3 and "no plait runs" in empty.err and len(empty.err.strip().splitlines()) == 1
    append_run(_store(project), parallel_run()[:3])
    missing = plait("log", "nosuch", cwd=project)
    assert missing.code == 2 and "no run 'nosuch'" in missing.err
    unfinished = plait("status", cwd=project)
    assert unfinished.code == 0 and "running? (no event for" in unfinished.out
