"""Turns a model spec such as `anthropic:claude-sonnet-4-5` into a `Model`, finding its key and URL."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import SecretStr

from plait.errors import MissingApiKey, UsageError
from plait.messages import Model, ModelRequest, ModelResponse, RetryHook, TextHook, TextStreaming

__all__ = ["OPENAI_URL", "SPEC_FORMS", "OnFirstCall", "ProviderSettings", "compatible_url", "make_model", "openai_api"]

SPEC_FORMS = (
    "openai:NAME, openai-responses:NAME, openai-chat:NAME, anthropic:NAME, openai-compatible:NAME@URL or scripted:FILE"
)
OPENAI_URL = "https://api.openai.com/v1"
_COMPATIBLE_EXAMPLE = "openai-compatible:qwen2.5-coder@http://localhost:11434/v1"
_COMPATIBLE = re.compile(r"(?P<name>[^@]+)@(?P<url>https?://\S+)")


class ProviderSettings(Protocol):
    """What making a model reads of the settings (`plait.settings.Settings` has it): keys, timeout, retries."""

    @property
    def openai_api_key(self) -> SecretStr | None: ...

    @property
    def anthropic_api_key(self) -> SecretStr | None: ...

    @property
    def request_timeout(self) -> float: ...

    @property
    def max_retries(self) -> int: ...

    @property
    def retry_budget(self) -> float: ...


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


class OnFirstCall:
    """A provider's model, made (and its SDK imported) when it is first asked something.

    A resumed run replays its logged calls without a model: importing an SDK (half a second or more) would
    only delay its first new call. The spec, the key and the URL are checked at once all the same.
    """

    streams_text = True

    def __init__(self, name: str, make: Callable[[], Model]) -> None:
        self._name = name
        self._make: Callable[[], Model] | None = make
        self._made: Model | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def made(self) -> bool:
        """Whether the model was made (its SDK imported)."""
        return self._made is not None

    def model(self) -> Model:
        """The provider's model, made now if it was not yet."""
        if self._made is None:
            assert self._make is not None
            self._made, self._make = self._make(), None
        return self._made

    def __getattr__(self, name: str) -> Any:  # the provider's own attributes: model_id, base_url, provider
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.model(), name)

    async def complete(
        self, request: ModelRequest, *, on_retry: RetryHook | None = None, on_text: TextHook | None = None
    ) -> ModelResponse:
        model = self.model()
        if on_text is not None and isinstance(model, TextStreaming):
            return await model.complete(request, on_retry=on_retry, on_text=on_text)
        return await model.complete(request, on_retry=on_retry)


def _key(setting: SecretStr | None, env: Mapping[str, str], var: str, field: str) -> str:
    if setting is not None and setting.get_secret_value():
        return setting.get_secret_value()
    if env.get(var):
        return env[var]
    raise MissingApiKey(f"{var} is not set: export it, or set {field} in ~/.config/plait/config.toml")


def make_model(spec: str, settings: ProviderSettings, env: Mapping[str, str] | None = None) -> Model:
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
    # A provider's SDK is imported when its model is first asked something (see `OnFirstCall`).
    if provider in ("openai", "openai-responses", "openai-chat"):
        key = _key(settings.openai_api_key, env, "OPENAI_API_KEY", "openai_api_key")
        url = env.get("OPENAI_BASE_URL") or None
        api = openai_api(provider, url)

        def openai_model() -> Model:
            from plait.models.openai_provider import OpenAIModel

            kind = OpenAIModel
            if api == "responses":  # the only one of the two sent through the SDK
                from plait.models.responses_provider import OpenAIResponsesModel

                kind = OpenAIResponsesModel
            return kind(
                spec, rest, api_key=key, base_url=url, timeout=timeout, max_retries=retries, retry_budget=budget
            )

        return OnFirstCall(spec, openai_model)
    if provider == "anthropic":
        key = _key(settings.anthropic_api_key, env, "ANTHROPIC_API_KEY", "anthropic_api_key")
        url = env.get("ANTHROPIC_BASE_URL") or None

        def anthropic_model() -> Model:
            from plait.models.anthropic_provider import AnthropicModel

            return AnthropicModel(
                spec, rest, api_key=key, base_url=url, timeout=timeout, max_retries=retries, retry_budget=budget
            )

        return OnFirstCall(spec, anthropic_model)
    if provider == "openai-compatible":
        match = _COMPATIBLE.fullmatch(rest)
        if match is None:
            raise UsageError(f"model '{spec}' needs a server URL: use {_COMPATIBLE_EXAMPLE}")
        secret = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        key = secret or env.get("OPENAI_API_KEY") or "not-needed"

        def compatible_model() -> Model:
            from plait.models.openai_provider import OpenAIModel

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

        return OnFirstCall(spec, compatible_model)
    if provider == "scripted":
        from plait.models.scripted import ScriptedModel  # yaml and asyncio: not for reading settings

        return ScriptedModel.from_file(rest)
    raise UsageError(f"model '{spec}' has an unknown provider '{provider}': use {SPEC_FORMS}")
