"""The HTML report's pictures: each task's diff, the waits for a claimed path on the timeline, the plan as a
dependency graph and the cost over time, on the real demo run and on a scripted run, rendered in Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from synthetic_run import RUN_ID, T0, parallel_run

from plait.events.store import SQLiteEventStore
from plait.events.types import Committed, Event, LeaseAction, LeaseChanged, ModelCallFinished, PlanMade
from plait.ui.cost import cost_breakdown
from plait.ui.report import render_html

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HOSTILE = "<script>alert(1)</script>"


@dataclass
class Demo:
    events: list[Event]
    html: str
    path: Path


def _run(args: list[str], cwd: Path, home: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
    env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": "/dev/null"}
    env |= {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "Test"}
    env |= {"GIT_COMMITTER_EMAIL": "t@example.invalid", "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "plait", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def demo(demo_run: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """The real demo run (scripted models, real git; a copy of the conftest's) and its report, by the real command."""
    root = tmp_path_factory.mktemp("demo")
    (root / "home").mkdir()
    where = root / "demo"
    shutil.copytree(demo_run[0], where, symlinks=True)
    run_id = demo_run[1]
    path = Path(_run(["report", "last", "--html"], where, root / "home").strip())
    events = SQLiteEventStore(where / ".git" / "plait" / "events.db").events(run_id)
    return Demo(events, path.read_text(encoding="utf-8"), path)


def _details(html: str, ident: str) -> str:
    found = re.search(rf'<details class="diff" id="{re.escape(ident)}">(.*?)</details>', html, re.S)
    assert found is not None, f"no {ident}"
    return found.group(1)


def test_each_task_of_the_demo_has_its_diff_highlighted(demo: Demo) -> None:
    tasks = {e.agent for e in demo.events if isinstance(e, Committed)}
    assert len(tasks) == 4
    assert demo.html.count('<details class="diff" ') == len(tasks)
    for task in tasks:
        block = _details(demo.html, f"diff-{task}")
        for kind in ("d-file", "d-hunk", "d-add"):
            assert f'<span class="{kind}">' in block, f"{task}'s diff has no {kind} line"
        files = next(e.files for e in reversed(demo.events) if isinstance(e, Committed) and e.agent == task)
        shown = re.findall(r'<span class="d-file">\+\+\+ b/([^<]+)</span>', block)
        assert sorted(shown) == sorted(files), f"{task}'s diff is its own work, not what it took from others"


def _scripted() -> list[Event]:
    return [e.model_copy(update={"seq": i}) for i, e in enumerate(parallel_run(), 1)]


def test_a_long_diff_is_capped_with_the_command_to_see_it_all_and_model_text_stays_text() -> None:
    events = _scripted()
    long = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +1,1000 @@\n" + "".join(f"+line {i}\n" for i in range(1000))
    hostile = f"diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-old\n+{HOSTILE}\n \\ No newline at end of file\n"
    html = render_html(events, diffs={"money": long, "cli": hostile})
    money = _details(html, "diff-money")
    assert money.count('<span class="d-add">') == 400 - 4
    head = next(e.sha for e in reversed(events) if isinstance(e, Committed) and e.agent == "money")
    marker = re.search(r'<span class="d-cut">… (\d+) more lines not shown.*?<code>(.*?)</code>', money)
    assert marker is not None and marker.group(1) == "604"
    base = events[0].base_commit  # type: ignore[attr-defined]
    assert marker.group(2) == f"git diff {base[:12]} {head[:12]}"
    cli = _details(html, "diff-cli")
    assert HOSTILE not in html and "+&lt;script&gt;alert(1)&lt;/script&gt;" in cli
    assert '<span class="d-del">-old</span>' in cli and '<span class="d-ctx">' in cli
    assert "The repository was not at hand" in _details(html, "diff-ledger")


def _lease(agent: str, at: float, action: LeaseAction, path: str, holder: str, why: str = "") -> LeaseChanged:
    ids = {"run_id": RUN_ID, "agent": agent, "ts": T0 + at, "task": agent}
    return LeaseChanged(**ids, decision=f"{action} {path}", action=action, path=path, holder=holder, why=why)


def _with_waits(events: list[Event]) -> list[Event]:
    """The scripted run where cli waits for money's tally/money.py (granted), and ledger waits for cli's
    tally/cli.py until its attempt ends; a hostile reason rides along."""
    extra = [
        _lease("cli", 16.2, "wait", "tally/money.py", "money", HOSTILE),
        _lease("cli", 19.9, "claim", "tally/money.py", "cli"),
        _lease("ledger", 21.5, "wait", "tally/cli.py", "cli"),
    ]
    ordered = sorted([*events, *extra], key=lambda e: e.ts)
    return [e.model_copy(update={"seq": i}) for i, e in enumerate(ordered, 1)]


def _waits(html: str) -> list[tuple[str, str, str, str]]:
    found = re.findall(
        r'<rect class="wait" x="([\d.]+)" [^>]*width="([\d.]+)"[^>]*data-holder="([^"]*)" data-path="([^"]*)">'
        r"<title>([^<]*)</title>",
        html,
    )
    return [(holder, path, title, width) for _, width, holder, path, title in found]


def test_a_wait_for_a_claimed_path_is_its_own_segment_on_the_lane() -> None:
    html = render_html(_with_waits(_scripted()))
    waits = _waits(html)
    assert [(h, p) for h, p, _, _ in waits] == [("money", "tally/money.py"), ("cli", "tally/cli.py")]
    granted, unended = waits[0][2], waits[1][2]
    assert granted.startswith("cli waits for money to release tally/money.py (3.7s): &lt;script&gt;")
    assert unended.startswith("ledger waits for cli to release tally/cli.py (4.6s)"), "it ends with the attempt"
    assert 'id="tl-hatch"' in html and HOSTILE not in html
    assert '<rect class="wait"' not in render_html(_scripted()), "no wait, no segment"


def test_the_demo_shows_its_wait_for_a_held_path(demo: Demo) -> None:
    waited = [e for e in demo.events if isinstance(e, LeaseChanged) and e.action == "wait"]
    assert waited, "the demo no longer waits for a path"
    waits = _waits(demo.html)
    assert [(h, p) for h, p, _, _ in waits] == [(e.holder, e.path) for e in waited]
    for (holder, path, title, _), event in zip(waits, waited, strict=True):
        assert title.startswith(f"{event.agent} waits for {holder} to release {path}")


def _graph(html: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    svg = html.split('<svg class="plan"')[1].split("</svg>")[0]
    boxes = re.findall(r'<a href="#agent-([^"]+)"><g class="node ([^"]+)" data-task="\1">', svg)
    arrows = re.findall(r'<path class="dep" data-from="([^"]+)" data-to="([^"]+)"', svg)
    return boxes, arrows


def test_the_plan_is_a_graph_with_a_box_per_task_and_an_arrow_per_dependency() -> None:
    depends = {"money": [], "ledger": ["money"], "cli": ["money", "ledger", "nosuch"]}
    events = []
    for e in _scripted():
        if isinstance(e, PlanMade):
            tasks = [t.model_copy(update={"depends_on": depends[t.id]}) for t in e.plan.tasks]
            e = e.model_copy(update={"plan": e.plan.model_copy(update={"tasks": tasks})})
        events.append(e)
    html = render_html(events)
    boxes, arrows = _graph(html)
    assert boxes == [("money", "done"), ("ledger", "done"), ("cli", "done")]
    assert sorted(arrows) == [("ledger", "cli"), ("money", "cli"), ("money", "ledger")], "no arrow to an unknown task"
    x = {t: float(m) for t, m in re.findall(r'data-task="(\w+)"><title>[^<]*</title><rect x="([\d.]+)"', html)}
    assert x["money"] < x["ledger"] < x["cli"], "each layer right of the one it depends on"
    for task, _ in boxes:
        assert f'id="agent-{task}"' in html, "the box links to the task's section"


def test_the_demo_plan_has_a_box_per_task_coloured_by_its_end(demo: Demo) -> None:
    plan = next(e.plan for e in reversed(demo.events) if isinstance(e, PlanMade))
    boxes, arrows = _graph(demo.html)
    assert [b for b, _ in boxes] == [t.id for t in plan.tasks]
    assert {s for _, s in boxes} == {"done"}
    assert len(arrows) == sum(len(t.depends_on) for t in plan.tasks)


def _lines(html: str) -> dict[str, tuple[float, list[tuple[float, float]]]]:
    svg = html.split('<svg class="costs"')[1].split("</svg>")[0]
    found = re.findall(r'<polyline class="cost-line (\w+)" data-final="([\d.]+)" points="([^"]+)">', svg)
    return {
        name: (float(final), [(float(a), float(b)) for a, b in (p.split(",") for p in points.split())])
        for name, final, points in found
    }


def test_the_cost_over_time_climbs_by_phase_to_the_total_in_dollars() -> None:
    events = _scripted()
    html = render_html(events)
    assert 'data-unit="$"' in html
    lines = _lines(html)
    assert list(lines) == ["planning", "work", "reconciliation", "total"]
    spent = sum(e.cost_usd for e in events if isinstance(e, ModelCallFinished))
    assert lines["total"][0] == pytest.approx(spent, abs=1e-6)
    assert sum(final for name, (final, _) in lines.items() if name != "total") == pytest.approx(spent, abs=1e-5)
    for _, points in lines.values():
        xs, ys = [a for a, _ in points], [b for _, b in points]
        assert xs == sorted(xs) and ys == sorted(ys, reverse=True), "time runs right, spending only climbs"


def test_the_demo_cost_over_time_is_in_billed_tokens_as_its_model_is_unpriced(demo: Demo) -> None:
    assert 'data-unit="billed tokens"' in demo.html
    lines = _lines(demo.html)
    assert list(lines) == ["planning", "work", "total"]
    calls = [e for e in demo.events if isinstance(e, ModelCallFinished)]
    assert lines["total"][0] == pytest.approx(cost_breakdown(demo.events).total.billed_tokens)
    assert len(lines["total"][1]) == 2 * len(calls) + 2


def _chromium(url: str, profile: Path) -> subprocess.CompletedProcess[str]:
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    args += ["--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", "--dump-dom", url]
    return subprocess.run(args, capture_output=True, text=True, timeout=90, check=False)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)")
def test_both_reports_render_in_headless_chromium_without_errors(demo: Demo, tmp_path: Path) -> None:
    scripted = tmp_path / "scripted.html"
    scripted.write_text(render_html(_with_waits(_scripted()), diffs={"cli": f"+{HOSTILE}\n"}), encoding="utf-8")
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    control = _chromium(broken.as_uri(), tmp_path / "profile0")
    assert "Uncaught" in control.stderr, "the check cannot see script errors in this chromium"
    for n, page in enumerate((demo.path, scripted), 1):
        shown = _chromium(page.as_uri(), tmp_path / f"profile{n}")
        assert shown.returncode == 0, shown.stderr[-2000:]
        assert "Uncaught" not in shown.stderr, shown.stderr
        assert 'data-rendered="ok"' in shown.stdout, "the report's script did not run to its end"
        for part in ('<svg class="plan"', '<svg class="costs"', '<rect class="wait"', '<details class="diff"'):
            assert part in shown.stdout, f"{page.name} lacks {part}"
        assert shown.stdout.count("<script") == 1, "the report's own script, and no other"
