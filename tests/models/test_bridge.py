"""The three providers, streamed through the official SDKs, against the shared fake LLM server (llm-bridge),
which speaks each API as its own documentation says, independently of this repository's wire server.

The bridge is found at `../shared/tools/llm-bridge` beside the repository, or where PLAIT_LLM_BRIDGE points
(its folder or its bridge.py); where it is absent (a clone of the repository alone), these tests skip.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plait.errors import ModelError
from plait.messages import ModelRequest, TextStreaming, ToolResultMessage, UserMessage
from plait.models import AnthropicModel, OpenAIModel, OpenAIResponsesModel


def _bridge() -> Path | None:
    configured = os.environ.get("PLAIT_LLM_BRIDGE")
    place = Path(configured) if configured else Path(__file__).resolve().parents[2].parent / "shared/tools/llm-bridge"
    script = place / "bridge.py" if place.is_dir() else place
    return script if script.is_file() else None


BRIDGE = _bridge()
pytestmark = pytest.mark.skipif(
    BRIDGE is None, reason="llm-bridge not found at ../shared/tools/llm-bridge nor at PLAIT_LLM_BRIDGE"
)


class Bridge:
    """A bridge process in script mode, its access log, and its URL."""

    def __init__(self, script: list[dict[str, Any]], folder: Path) -> None:
        assert BRIDGE is not None
        (folder / "script.json").write_text(json.dumps(script))
        self.log = folder / "calls.jsonl"
        command = [sys.executable, str(BRIDGE), "serve", "--mode", "script", "--script", str(folder / "script.json")]
        command += ["--port", "0", "--quiet", "--log", str(self.log)]
        errors = folder / "stderr.txt"
        with errors.open("w") as stderr:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening on " not in line:
            self.close()
            pytest.fail(f"the bridge did not start: {line}{errors.read_text()}")
        self.url = line.split("listening on ", 1)[1].strip()

    def calls(self) -> list[dict[str, Any]]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [record for record in map(json.loads, lines) if "call" in record]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def bridge(tmp_path: Path) -> Iterator[Callable[[list[dict[str, Any]]], Bridge]]:
    started: list[Bridge] = []

    def start(script: list[dict[str, Any]]) -> Bridge:
        started.append(Bridge(script, tmp_path))
        return started[-1]

    yield start
    for running in started:
        running.close()


async def _no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def _model(fmt: str, url: str, **options: Any) -> TextStreaming:
    settings: dict[str, Any] = {"api_key": "test", "timeout": 30.0, "max_retries": 2, "sleep": _no_sleep, **options}
    if fmt == "anthropic":
        return AnthropicModel("anthropic:bridge", "bridge", base_url=url, **settings)
    kind = OpenAIResponsesModel if fmt == "responses" else OpenAIModel
    return kind(f"{fmt}:bridge", "bridge", base_url=url + "/v1", **settings)


TURN = {
    "text": "Reading it.",
    "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "src/a.py"}}],
}


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic"])
def test_a_tool_round_streamed_through_the_bridge(
    bridge: Callable[[list[dict[str, Any]]], Bridge], tool_round: ModelRequest, fmt: str
) -> None:
    server = bridge([{"error": {"status": 429, "message": "slow down"}}, TURN, {"text": "Done."}])
    model = _model(fmt, server.url)
    pieces: list[str] = []
    retried: list[str] = []
    first = asyncio.run(
        model.complete(tool_round, on_retry=lambda a, w, why: retried.append(why), on_text=pieces.append)
    )
    assert first.text == "Reading it." and "".join(pieces) == "Reading it."
    [call] = first.tool_calls
    assert (call.name, call.arguments) == ("read_file", {"path": "src/a.py"})
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    assert len(retried) == 1 and "429" in retried[0]
    result = ToolResultMessage(call_id=call.id, name="read_file", content="x = 1")
    follow = tool_round.model_copy(update={"messages": (*tool_round.messages, first.as_message(), result)})
    assert asyncio.run(model.complete(follow)).text == "Done."
    calls = server.calls()
    assert [c["status"] for c in calls] == [429, 200, 200]
    assert all(c["stream"] is True for c in calls)
    assert {c["format"] for c in calls} == {fmt}


@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic"])
def test_an_exhausted_script_fails_in_one_line(bridge: Callable[[list[dict[str, Any]]], Bridge], fmt: str) -> None:
    server = bridge([{"text": "only one"}])
    model = _model(fmt, server.url)
    request = ModelRequest(system="s", messages=(UserMessage(text="go"),), max_output_tokens=50)
    assert asyncio.run(model.complete(request)).text == "only one"
    with pytest.raises(ModelError) as caught:
        asyncio.run(model.complete(request))
    assert "script exhausted" in str(caught.value) and "\n" not in str(caught.value)
