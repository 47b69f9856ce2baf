"""The pricing rule in plain Python: the default prices, how a model's name is looked up, what a call's tokens cost
and how the providers bill them.

A provider bills a prompt's cached part at a fraction of the input price and may bill a cache write at a
premium: Anthropic reads at 0.1× and writes (5 minutes) at 1.25×; OpenAI reads at 0.1× (GPT-5 and later),
0.25× (GPT-4.1, o3, o4-mini) or 0.5× (GPT-4o), and writes at no premium before GPT-5.6, 1.25× from it on.
*Billed tokens* weigh a call's tokens that way (output at 1×), so runs compare as the providers bill them.

Nothing here imports pydantic: the read-only commands price a run's calls with `RateTable` over `DEFAULT_RATES`,
and `plait.models.pricing.PriceTable` (prices validated from the settings) is the same table over its `Price`s.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Generic, NamedTuple, Protocol, TypeVar

__all__ = ["CACHE_RATIOS", "DEFAULT_RATES", "Rate", "RateTable", "Rated", "Tokens"]


class Rated(Protocol):
    """A price: US dollars per million tokens; cache prices default to the input price when unknown (None)."""

    @property
    def input(self) -> float: ...
    @property
    def output(self) -> float: ...
    @property
    def cached_input(self) -> float | None: ...
    @property
    def cache_write(self) -> float | None: ...


class Tokens(Protocol):
    """A call's tokens, as `plait.messages.Usage` counts them."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> int: ...


class Rate(NamedTuple):
    """A price as plain numbers: US dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None


# Public list prices (USD per 1M tokens) as published by the providers in late 2026.
DEFAULT_RATES: Mapping[str, Rate] = {
    "openai:gpt-5.1": Rate(1.25, 10.0, 0.125),
    "openai:gpt-5.1-mini": Rate(0.25, 2.0, 0.025),
    "openai:gpt-5": Rate(1.25, 10.0, 0.125),
    "openai:gpt-5-mini": Rate(0.25, 2.0, 0.025),
    "openai:gpt-5-nano": Rate(0.05, 0.40, 0.005),
    "openai:gpt-4.1": Rate(2.0, 8.0, 0.50),
    "openai:gpt-4.1-mini": Rate(0.40, 1.60, 0.10),
    "openai:gpt-4o": Rate(2.50, 10.0, 1.25),
    "openai:gpt-4o-mini": Rate(0.15, 0.60, 0.075),
    "openai:o3": Rate(2.0, 8.0, 0.50),
    "openai:o4-mini": Rate(1.10, 4.40, 0.275),
    "anthropic:claude-opus-4-5": Rate(5.0, 25.0, 0.50, 6.25),
    "anthropic:claude-opus-4-1": Rate(15.0, 75.0, 1.50, 18.75),
    "anthropic:claude-sonnet-4-5": Rate(3.0, 15.0, 0.30, 3.75),
    "anthropic:claude-sonnet-4": Rate(3.0, 15.0, 0.30, 3.75),
    "anthropic:claude-haiku-4-5": Rate(1.0, 5.0, 0.10, 1.25),
    "anthropic:claude-3-5-haiku": Rate(0.80, 4.0, 0.08, 1.0),
}
"""The price of each model plait knows, by its full name."""

CACHE_RATIOS: tuple[tuple[str, float, float], ...] = (
    ("anthropic:*", 0.1, 1.25),
    ("openai:gpt-5.6*", 0.1, 1.25),
    ("openai:gpt-5*", 0.1, 1.0),
    ("openai:gpt-4.1*", 0.25, 1.0),
    ("openai:o3*", 0.25, 1.0),
    ("openai:o4*", 0.25, 1.0),
    ("openai:gpt-4o*", 0.5, 1.0),
)
"""(model glob, cache read ÷ input, cache write ÷ input) for a model the price table lacks; the first match wins."""

P = TypeVar("P", bound=Rated)


class RateTable(Generic[P]):
    """Prices by model; looks a model up by its full name, then by its name with a date suffix removed."""

    def __init__(self, prices: Mapping[str, P]) -> None:
        self._prices: dict[str, P] = dict(prices)

    def price(self, model: str) -> P | None:
        """The model's price, None when it has none (local or scripted models)."""
        provider, _, name = model.partition(":")
        if provider in ("openai-responses", "openai-chat"):  # the same models, whichever API they are asked through
            model = f"openai:{name}"
        if model in self._prices:
            return self._prices[model]
        base = model.rsplit("-", 1)[0] if model[-8:].isdigit() else model
        return self._prices.get(base)

    def cache_ratios(self, model: str) -> tuple[float, float]:
        """What a cached input token and a cache-written one cost, as parts of a plain input token's price.

        From the model's price when it has one; else the provider's published ratios (`CACHE_RATIOS`);
        else 1 and 1 (a server that caches nothing, or bills it all alike).
        """
        price = self.price(model)
        if price is not None and price.input > 0:
            read = price.cached_input if price.cached_input is not None else price.input
            write = price.cache_write if price.cache_write is not None else price.input
            return read / price.input, write / price.input
        return next(((r, w) for glob, r, w in CACHE_RATIOS if fnmatchcase(model, glob)), (1.0, 1.0))

    def billed_tokens(self, model: str, usage: Tokens) -> float:
        """`usage` as the provider bills it, in plain input tokens: cached and written input weighed, output at 1×."""
        read, write = self.cache_ratios(model)
        fresh = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
        return fresh + usage.cached_tokens * read + usage.cache_write_tokens * write + usage.output_tokens

    def cost(self, model: str, usage: Tokens) -> float:
        """Dollar cost of `usage`; 0.0 for a model with no price (local or scripted models)."""
        price = self.price(model)
        if price is None:
            return 0.0
        cached = price.cached_input if price.cached_input is not None else price.input
        write = price.cache_write if price.cache_write is not None else price.input
        fresh = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
        total = (
            fresh * price.input
            + usage.cached_tokens * cached
            + usage.cache_write_tokens * write
            + usage.output_tokens * price.output
        )
        return total / 1_000_000

    def saved_usd(self, model: str, usage: Tokens) -> float:
        """What caching saved on `usage`: reads below the input price, less writes above it (negative if no read
        paid); 0.0 for a model with no price."""
        price = self.price(model)
        if price is None:
            return 0.0
        read, write = self.cache_ratios(model)
        discount = usage.cached_tokens * price.input * (1 - read)
        premium = usage.cache_write_tokens * price.input * (write - 1)
        return (discount - premium) / 1_000_000
