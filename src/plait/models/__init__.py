"""Language models: providers, scripted models and prices (the neutral conversation is `plait.messages`)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plait.models.anthropic_provider import AnthropicModel
    from plait.models.openai_provider import OpenAIModel
    from plait.models.pricing import DEFAULT_PRICES, Price, PriceTable
    from plait.models.registry import make_model
    from plait.models.responses_provider import OpenAIResponsesModel
    from plait.models.scripted import FunctionModel, ScriptedModel, ScriptTurn

__all__ = [
    "DEFAULT_PRICES",
    "AnthropicModel",
    "FunctionModel",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "Price",
    "PriceTable",
    "ScriptTurn",
    "ScriptedModel",
    "make_model",
]


def __getattr__(name: str) -> object:
    """Import a provider, and its SDK, on first use: the SDKs take a second to import; the registry and the
    scripted models (yaml, asyncio) too, which reading an event log never needs."""
    if name in ("DEFAULT_PRICES", "Price", "PriceTable"):  # pydantic: `plait.models.rates` is read without it
        from plait.models import pricing

        return getattr(pricing, name)
    if name == "make_model":
        from plait.models.registry import make_model

        return make_model
    if name in ("FunctionModel", "ScriptedModel", "ScriptTurn"):
        from plait.models import scripted

        return getattr(scripted, name)
    if name == "AnthropicModel":
        from plait.models.anthropic_provider import AnthropicModel

        return AnthropicModel
    if name == "OpenAIModel":
        from plait.models.openai_provider import OpenAIModel

        return OpenAIModel
    if name == "OpenAIResponsesModel":
        from plait.models.responses_provider import OpenAIResponsesModel

        return OpenAIResponsesModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
