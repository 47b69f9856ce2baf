"""The Chat Completions provider posts its requests without the OpenAI SDK: a resumed run's first new call
neither imports it nor has every message of a long conversation re-validated against its types."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from plait.messages import ModelRequest
from plait.models import OpenAIModel
from wire_server import WireServer

_CALL = """
import asyncio, json, sys
from plait.messages import ModelRequest, UserMessage
from plait.models.registry import make_model
from plait.settings import Settings

model = make_model(sys.argv[1], Settings())
reply = asyncio.run(model.complete(ModelRequest(system="s", messages=(UserMessage(text="hi"),), max_output_tokens=10)))
print(json.dumps({"text": reply.text, "sdk": "openai" in sys.modules}))
"""


def test_a_chat_call_does_not_import_the_sdk() -> None:
    with WireServer([{"text": "hello"}]) as server:
        spec = f"openai-compatible:m@{server.openai_url}"
        done = subprocess.run([sys.executable, "-c", _CALL, spec], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"text": "hello", "sdk": False}


def test_organisation_and_project_are_sent_as_the_sdk_sent_them(
    server: WireServer,
    openai_model: Callable[..., OpenAIModel],
    hello: ModelRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    server.push({"text": "ok"})
    assert asyncio.run(openai_model().complete(hello)).text == "ok"
    [sent] = server.requests
    assert (sent.headers["openai-organization"], sent.headers["openai-project"]) == ("org-1", "proj-1")
    assert sent.headers["content-type"] == "application/json"
    assert sent.body["stream"] is True and "tools" not in sent.body and "tool_choice" not in sent.body


def test_a_query_in_the_base_url_stays_after_the_path(server: WireServer, hello: ModelRequest) -> None:
    """As the SDK kept it: a gateway's `?api-version=...` on the base URL."""
    model = OpenAIModel("openai:m", "m", api_key="k", base_url=f"{server.openai_url}/?api-version=7")
    server.push({"text": "ok"})
    assert asyncio.run(model.complete(hello)).text == "ok"
    assert server.requests[0].path == "/v1/chat/completions?api-version=7"
