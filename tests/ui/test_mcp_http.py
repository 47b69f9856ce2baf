"""`plait mcp --transport http`: the SDK's client over streamable HTTP, and a server that answers only to localhost."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_support import Plait
from mcp import Client
from mcp_support import SECRET, TOOLS, all_events, assert_safe, call, until_ended, write_script


@pytest.fixture
def served(project: Path, env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """`plait mcp` over HTTP on a free port; its URL."""
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "plait", "mcp", "--transport", "http", "--port", "0"],
            cwd=project,
            env={**env, "GH_PAT": SECRET},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield found[1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_client_over_http_starts_and_follows_a_run(project: Path, served: str) -> None:
    spec = write_script(project, delay=0)

    async def main() -> dict[str, Any]:
        async with Client(served, read_timeout_seconds=60) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            run_id = (await call(client, "start_run", task="write hello", mode="single", model=spec))["run_id"]
            status = await until_ended(client, run_id)
            events = await all_events(client, run_id)
            diff = await call(client, "task_diff", run_id=run_id)
            report = await client.read_resource(f"plait://runs/{run_id}/report.html")
            return {"status": status, "events": events, "diff": diff, "html": getattr(report.contents[0], "text", "")}

    seen = anyio.run(main)
    assert_safe(seen)
    assert seen["status"]["status"] == "done"
    assert "Model says ␛[2J␛]0;pwned␇ with [REDACTED]" in json.dumps(seen["events"], ensure_ascii=False)
    assert "+hello ␛[31mred␛[0m [REDACTED]" in seen["diff"]["diff"]
    assert seen["html"].startswith("<!doctype html>") and seen["status"]["run_id"] in seen["html"]


def _post(url: str, headers: dict[str, str]) -> int:
    match = re.fullmatch(r"http://([\d.]+):(\d+)(/mcp)", url)
    assert match
    conn = http.client.HTTPConnection(match[1], int(match[2]), timeout=30)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    try:
        conn.request(
            "POST",
            match[3],
            json.dumps(body),
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        )
        return conn.getresponse().status
    finally:
        conn.close()


def test_requests_for_another_host_or_origin_are_refused(served: str) -> None:
    port = served.split(":")[2].split("/")[0]
    assert _post(served, {"Host": f"evil.example:{port}"}) == 421  # DNS rebinding: a page's name for 127.0.0.1
    assert _post(served, {"Origin": "http://evil.example"}) == 403  # a web page's script calling localhost


def test_listening_beyond_loopback_needs_an_explicit_flag(plait: Plait, project: Path) -> None:
    result = plait("mcp", "--transport", "http", "--host", "0.0.0.0", cwd=project)
    assert result.code == 2
    assert "not this machine's loopback" in result.err and "--allow-remote" in result.err
    assert "Traceback" not in result.err
