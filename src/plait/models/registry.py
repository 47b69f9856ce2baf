"""Turns a model spec such as `anthropic:claude-sonnet-4-5` into a `Model`, finding its key and URL."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import SecretStr

from plait.errors import MissingApiKey, UsageError
from plait.models.base import Model

if TYPE_CHECKING:  # plait.settings imports plait.models for prices
    from plait.settings import Settings

__all__ = ["OPENAI_URL", "SPEC_FORMS", "compatible_url", "make_model", "openai_api"]

SPEC_FORMS = (
    "openai:NAME, openai-responses:NAME, openai-chat:NAME, anthropic:NAME, openai-compatible:NAME@URL or scripted:FILE"
)
OPENAI_URL = "https://api.openai.com/v1"
_COMPATIBLE_EXAMPLE = "openai-compatible:qwen2.5-coder@http://localhost:11434/v1"
_COMPATIBLE = re.compile(r"(?P<name>[^@]+)@(?P<url>https?://\S+)")


def compatible_url(spec: str) -> str | None:
    """The server URL of an `openai-compatible:NAME@URL` spec (which is sent the OpenAI key); None otherwise."""
    provider, _, rest = spec.partition(":")
    match = _COMPATIBLE.fullmatch(rest.strip()) if provider == "openai-compatible" else None
    return match["url"] if match else None


def openai_api(provider: str, url: str | None) -> str:
    """Which OpenAI API a spec's provider speaks: "responses" or "chat".

    `openai-responses` and `openai-chat` say so; `openai` speaks the Responses API to OpenAI's own endpoint
    (what OpenAI recommends, and the only API of some of its models) and Chat Completions to any other
    OPENAI_BASE_URL (proxies and gateways seldom know the newer API).
    """
    if provider in ("openai-responses", "openai-chat"):
        return provider.removeprefix("openai-")
    return "responses" if url is None or url.rstrip("/") == OPENAI_URL else "chat"


def _key(setting: SecretStr | None, env: Mapping[str, str], var: str, field: str) -> str:
    if setting is not None and setting.get_secret_value():
        return setting.get_secret_value()
    if env.get(var):
        return env[var]
    raise MissingApiKey(f"{var} is not set: export it, or set {field} in ~/.config/plait/config.toml")


def make_model(spec: str, settings: Settings, env: Mapping[str, str] | None = None) -> Model:
    """Build the model `spec` names.

    Args:
        spec: `openai:NAME`, `openai-responses:NAME`, `openai-chat:NAME` (see `openai_api`), `anthropic:NAME`,
            `openai-compatible:NAME@URL` (Chat Completions) or `scripted:FILE`.
        settings: Gives the API keys, the request timeout, the retry count and the retry budget.
        env: Where OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENAI_BASE_URL and ANTHROPIC_BASE_URL
            are looked up when settings lack them; `os.environ` by default.

    Raises:
        UsageError: The spec is malformed.
        MissingApiKey: The provider needs a key and none is set.
        ScriptError: A scripted model's file cannot be read.
    """
    env = os.environ if env is None else env
    provider, _, rest = spec.partition(":")
    rest = rest.strip()
    if not rest:
        raise UsageError(f"model '{spec}' is not valid: use {SPEC_FORMS}")
    timeout, retries, budget = settings.request_timeout, settings.max_retries, settings.retry_budget
    # Each provider's SDK is imported when first needed: together they take a second to import.
    if provider in ("openai", "openai-responses", "openai-chat"):
        from plait.models.openai_provider import OpenAIModel
        from plait.models.responses_provider import OpenAIResponsesModel

        key = _key(settings.openai_api_key, env, "OPENAI_API_KEY", "openai_api_key")
        url = env.get("OPENAI_BASE_URL") or None
        kind = OpenAIResponsesModel if openai_api(provider, url) == "responses" else OpenAIModel
        return kind(spec, rest, api_key=key, base_url=url, timeout=timeout, max_retries=retries, retry_budget=budget)
    if provider == "anthropic":
        from plait.models.anthropic_provider import AnthropicModel

        key = _key(settings.anthropic_api_key, env, "ANTHROPIC_API_KEY", "anthropic_api_key")
        url = env.get("ANTHROPIC_BASE_URL") or None
        return AnthropicModel(
            spec, rest, api_key=key, base_url=url, timeout=timeout, max_retries=retries, retry_budget=budget
        )
    if provider == "openai-compatible":
        from plait.models.openai_provider import OpenAIModel

        match = _COMPATIBLE.fullmatch(rest)
        if match is None:
            raise UsageError(f"model '{spec}' needs a server URL: use {_COMPATIBLE_EXAMPLE}")
        secret = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        key = secret or env.get("OPENAI_API_KEY") or "not-needed"
        return OpenAIModel(
            spec,
            match["name"],
            api_key=key,
            base_url=match["url"],
            timeout=timeout,
            max_retries=retries,
            retry_budget=budget,
            provider=provider,
        )
    if provider == "scripted":
        from plait.models.scripted import ScriptedModel  # yaml and asyncio: not for reading settings

        return ScriptedModel.from_file(rest)
    raise UsageError(f"model '{spec}' has an unknown provider '{provider}': use {SPEC_FORMS}")
