"""A provider's SDK is imported when its model is first asked something, not when the model is made: a resumed
run replays its logged calls without paying for the import. The spec and the key are still checked at once.
The Chat Completions provider posts its JSON itself and imports no SDK at all."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from plait.errors import MissingApiKey
from plait.models import make_model
from plait.settings import Settings
from wire_server import WireServer

_PROBE = """
import asyncio, json, sys
from plait.messages import ModelRequest
from plait.models import make_model
from plait.settings import Settings

spec, url = sys.argv[1], sys.argv[2]
env = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "OPENAI_BASE_URL": url + "/v1", "ANTHROPIC_BASE_URL": url}
model = make_model(spec.format(url=url), Settings(), env=env)
sdks = lambda: sorted(m for m in ("openai", "anthropic") if m in sys.modules)
made = sdks()
text = asyncio.run(model.complete(ModelRequest(system="s", messages=()))).text
print(json.dumps({"made": made, "called": sdks(), "text": text, "name": model.name}))
"""


@pytest.mark.parametrize(
    ("spec", "sdk"),
    [("openai:gpt-test", None), ("anthropic:claude-test", "anthropic"), ("openai-compatible:m@{url}/v1", None)],
)
def test_the_sdk_is_imported_at_the_first_call(server: WireServer, spec: str, sdk: str | None) -> None:
    server.push({"text": "hello"})
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, spec, server.url], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    called = [sdk] if sdk else []
    assert seen == {"made": [], "called": called, "text": "hello", "name": spec.format(url=server.url)}


def test_a_missing_key_is_still_found_when_the_model_is_made() -> None:
    with pytest.raises(MissingApiKey):
        make_model("anthropic:claude-test", Settings(), env={})
