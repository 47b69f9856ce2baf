"""`make_model`: specs, keys and base URLs, and the models it makes talking to the wire server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.errors import MissingApiKey, ModelError, UsageError
from plait.messages import ModelRequest
from plait.models import AnthropicModel, OpenAIModel, ScriptedModel, make_model
from plait.models.registry import OnFirstCall
from plait.settings import Settings
from wire_server import WireServer


def test_openai_spec_with_a_key_from_settings() -> None:
    model = make_model("openai:gpt-5.1", Settings(openai_api_key="sk-settings"), env={"OPENAI_API_KEY": "sk-env"})
    assert isinstance(model, OnFirstCall) and isinstance(model.model(), OpenAIModel)
    assert (model.name, model.model_id, model.provider) == ("openai:gpt-5.1", "gpt-5.1", "openai")
    assert model.base_url == "https://api.openai.com/v1"


def test_anthropic_spec_with_a_key_from_env() -> None:
    model = make_model("anthropic:claude-sonnet-4-5", Settings(), env={"ANTHROPIC_API_KEY": "sk-ant"})
    assert isinstance(model, OnFirstCall) and isinstance(model.model(), AnthropicModel)
    assert (model.name, model.model_id) == ("anthropic:claude-sonnet-4-5", "claude-sonnet-4-5")
    assert model.base_url == "https://api.anthropic.com"


def test_env_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-process")
    assert make_model("openai:gpt-5.1", Settings()).name == "openai:gpt-5.1"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "openai:gpt-5.1",
            "OPENAI_API_KEY is not set: export it, or set openai_api_key in ~/.config/plait/config.toml",
        ),
        (
            "anthropic:claude-sonnet-4-5",
            "ANTHROPIC_API_KEY is not set: export it, or set anthropic_api_key in ~/.config/plait/config.toml",
        ),
    ],
)
def test_missing_key(spec: str, message: str) -> None:
    with pytest.raises(MissingApiKey) as caught:
        make_model(spec, Settings(), env={"OPENAI_API_KEY": "", "OTHER": "x"})
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "spec",
    [
        "gpt-4o",
        "openai:",
        "mistral:large",
        "openai-compatible:qwen",
        "openai-compatible:qwen@localhost:11434/v1",
        "openai-compatible:@http://localhost:11434/v1",
    ],
)
def test_bad_specs_say_what_is_valid(spec: str) -> None:
    with pytest.raises(UsageError) as caught:
        make_model(spec, Settings(), env={})
    message = str(caught.value)
    assert spec in message
    assert "openai-compatible:" in message
    assert "\n" not in message


def test_openai_base_url_from_env_reaches_the_server(server: WireServer) -> None:
    server.push({"text": "via proxy"})
    env = {"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": server.openai_url}
    model = make_model("openai:gpt-5.1", Settings(), env=env)
    response = asyncio.run(model.complete(ModelRequest(system="s", messages=())))
    assert response.text == "via proxy"
    [sent] = server.requests
    assert sent.headers["authorization"] == "Bearer sk-env"
    assert (sent.body["model"], sent.body["max_completion_tokens"]) == ("gpt-5.1", 8192)


def test_anthropic_base_url_from_env_reaches_the_server(server: WireServer) -> None:
    server.push({"text": "via proxy"})
    env = {"ANTHROPIC_API_KEY": "sk-ant-env", "ANTHROPIC_BASE_URL": server.url}
    model = make_model("anthropic:claude-haiku-4-5", Settings(), env=env)
    response = asyncio.run(model.complete(ModelRequest(system="s", messages=())))
    assert response.text == "via proxy"
    assert server.requests[0].body["model"] == "claude-haiku-4-5"


def test_openai_compatible_needs_no_key(server: WireServer) -> None:
    server.push({"text": "local"})
    spec = f"openai-compatible:qwen2.5-coder@{server.openai_url}"
    model = make_model(spec, Settings(), env={})
    assert isinstance(model, OnFirstCall) and isinstance(model.model(), OpenAIModel)
    assert (model.name, model.model_id, model.base_url) == (spec, "qwen2.5-coder", server.openai_url)
    assert asyncio.run(model.complete(ModelRequest(system="s", messages=()))).text == "local"
    [sent] = server.requests
    assert sent.headers["authorization"] == "Bearer not-needed"
    assert sent.body["model"] == "qwen2.5-coder"
    assert sent.body["max_tokens"] == 8192


def test_openai_compatible_sends_a_key_when_one_is_set(server: WireServer) -> None:
    server.push({"text": "local"})
    model = make_model(f"openai-compatible:m@{server.openai_url}", Settings(), env={"OPENAI_API_KEY": "sk-local"})
    asyncio.run(model.complete(ModelRequest(system="s", messages=())))
    assert server.requests[0].headers["authorization"] == "Bearer sk-local"


def test_settings_give_the_retry_count(server: WireServer) -> None:
    server.push({"status": 500, "message": "boom"}, {"text": "never"})
    model = make_model(f"openai-compatible:m@{server.openai_url}", Settings(max_retries=0), env={})
    with pytest.raises(ModelError, match=r"failed: server error \(500\): boom$"):
        asyncio.run(model.complete(ModelRequest(system="s", messages=())))
    assert len(server.requests) == 1


def test_scripted_spec(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("turns:\n  - text: hello\n")
    model = make_model(f"scripted:{script}", Settings(), env={})
    assert isinstance(model, ScriptedModel)
    assert asyncio.run(model.complete(ModelRequest(system="s", messages=()))).text == "hello"
