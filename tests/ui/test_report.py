"""The HTML report of a scripted parallel run: what it contains, that its numbers add up, that it renders."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from synthetic_run import ENV_SECRET, FAKE_KEY, parallel_run

from plait.events.types import Event, MergeStep, ModelCallFinished, ToolCalled
from plait.messages import Usage
from plait.models.pricing import PriceTable
from plait.ui.report import render_html, write_report

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class _Page(HTMLParser):
    """The ids on the page, the text under each id'd element, and whether anything is fetched from elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}
        self.remote: list[str] = []
        self._open: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("src", "href"):
            value = a.get(key) or ""
            if re.match(r"(https?:)?//", value):
                self.remote.append(value)
        if tag == "div" and a.get("id"):
            self._open.append((tag, a["id"] or ""))
            self.ids[a["id"] or ""] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for _, ident in self._open:
            self.ids[ident] += data


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[Event]:
    monkeypatch.setenv(*ENV_SECRET)
    return [e.model_copy(update={"seq": i}) for i, e in enumerate(parallel_run(), 1)]


def test_every_tool_call_of_every_agent_is_in_the_report(events: list[Event]) -> None:
    page = _Page()
    html = render_html(events)
    page.feed(html)
    calls = [e for e in events if isinstance(e, ToolCalled)]
    assert {c.agent for c in calls} == {"planner", "money", "ledger", "cli"}
    for call in calls:
        text = page.ids.get(f"ev-{call.seq}")
        assert text is not None, f"{call.agent}'s {call.call.name} is missing"
        assert call.call.name in text
        for value in (call.call.arguments or {}).values():
            assert str(value).splitlines()[0] in text
        assert f'href="#ev-{call.seq}"' in html, "the timeline does not link to the call"
    for merge in (e for e in events if isinstance(e, MergeStep)):
        assert f'id="merge-{merge.seq}"' in html
    assert page.remote == [], "the report must not load anything from the network"


def test_the_costs_add_up_to_the_model_calls_usage(events: list[Event]) -> None:
    html = render_html(events)
    responses = [e for e in events if isinstance(e, ModelCallFinished)]
    usage = sum((e.response.usage for e in responses), Usage())
    prices = PriceTable()
    by_usage = sum(prices.cost(f"anthropic:{e.response.model}", e.response.usage) for e in responses)
    logged = sum(e.cost_usd for e in responses)
    assert logged == pytest.approx(by_usage)
    total = re.search(r'data-total-usd="([\d.]+)"', html)
    assert total is not None and float(total.group(1)) == pytest.approx(logged, abs=1e-6)
    agent_table = html.split("<h2>Cost</h2>")[1].split("</table>")[0]
    rows = re.findall(
        r"<tr><td>([\w-]+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>([\d.]+)</td>", agent_table
    )
    per_agent = {name: (int(calls), int(inp), int(out), float(cost)) for name, calls, inp, _, out, cost in rows}
    assert per_agent.pop("total") == (len(responses), usage.input_tokens, usage.output_tokens, pytest.approx(logged))
    assert sum(c for _, _, _, c in per_agent.values()) == pytest.approx(logged, abs=1e-5)
    assert sum(n for n, _, _, _ in per_agent.values()) == len(responses)
    assert sum(i for _, i, _, _ in per_agent.values()) == usage.input_tokens


def test_the_report_holds_the_timeline_merges_gate_and_changes(events: list[Event]) -> None:
    html = render_html(events, diffstat=" tally/cli.py | 4 +++-\n 1 file changed")
    assert html.count('class="span ') == 6, "planner, money, ledger, resolver and cli's two attempts"
    assert html.count('class="retry"') == 1 and html.count('class="gate fail"') == 1
    assert 'class="merge resolved"' in html and "kept both exports, sorted" in html
    assert "verify failed with cli" in html and "tally/cli.py | 4 +++-" in html
    assert html.count('class="integrated') == 2


def test_no_secret_reaches_the_report(events: list[Event]) -> None:
    html = render_html(events, diffstat=f"leaked {FAKE_KEY}")
    assert FAKE_KEY not in html and ENV_SECRET[1] not in html
    assert "DEPLOY_TOKEN=[REDACTED]" in html


def _chromium(url: str, profile: Path) -> subprocess.CompletedProcess[str]:
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    args += ["--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", "--dump-dom", url]
    return subprocess.run(args, capture_output=True, text=True, timeout=90, check=False)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)")
def test_the_report_renders_in_headless_chromium_without_errors(events: list[Event], tmp_path: Path) -> None:
    report = write_report(tmp_path / "report.html", events)
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")

    shown = _chromium(report.as_uri(), tmp_path / "profile")
    control = _chromium(broken.as_uri(), tmp_path / "profile2")

    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "Uncaught" in control.stderr, "the check cannot see script errors in this chromium"
    assert "Uncaught" not in shown.stderr, shown.stderr
    assert 'data-rendered="ok"' in shown.stdout, "the report's script did not run to its end"
    assert "<svg" in shown.stdout and "Transcripts" in shown.stdout
