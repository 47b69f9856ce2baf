"""Dollar cost of a call from a price table that configuration can extend or override, and its billed tokens.

A provider bills a prompt's cached part at a fraction of the input price and may bill a cache write at a
premium: Anthropic reads at 0.1× and writes (5 minutes) at 1.25×; OpenAI reads at 0.1× (GPT-5 and later),
0.25× (GPT-4.1, o3, o4-mini) or 0.5× (GPT-4o), and writes at no premium before GPT-5.6, 1.25× from it on.
*Billed tokens* weigh a call's tokens that way (output at 1×), so runs compare as the providers bill them.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from plait.messages import Usage

__all__ = ["CACHE_RATIOS", "DEFAULT_PRICES", "Price", "PriceTable", "logged_prices"]


class Price(BaseModel):
    """US dollars per million tokens. Cache prices default to the input price when unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None


def _p(inp: float, out: float, cached: float | None = None, write: float | None = None) -> Price:
    return Price(input=inp, output=out, cached_input=cached, cache_write=write)


# Public list prices (USD per 1M tokens) as published by the providers in late 2026.
DEFAULT_PRICES: Mapping[str, Price] = {
    "openai:gpt-5.1": _p(1.25, 10.0, 0.125),
    "openai:gpt-5.1-mini": _p(0.25, 2.0, 0.025),
    "openai:gpt-5": _p(1.25, 10.0, 0.125),
    "openai:gpt-5-mini": _p(0.25, 2.0, 0.025),
    "openai:gpt-5-nano": _p(0.05, 0.40, 0.005),
    "openai:gpt-4.1": _p(2.0, 8.0, 0.50),
    "openai:gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "openai:gpt-4o": _p(2.50, 10.0, 1.25),
    "openai:gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "openai:o3": _p(2.0, 8.0, 0.50),
    "openai:o4-mini": _p(1.10, 4.40, 0.275),
    "anthropic:claude-opus-4-5": _p(5.0, 25.0, 0.50, 6.25),
    "anthropic:claude-opus-4-1": _p(15.0, 75.0, 1.50, 18.75),
    "anthropic:claude-sonnet-4-5": _p(3.0, 15.0, 0.30, 3.75),
    "anthropic:claude-sonnet-4": _p(3.0, 15.0, 0.30, 3.75),
    "anthropic:claude-haiku-4-5": _p(1.0, 5.0, 0.10, 1.25),
    "anthropic:claude-3-5-haiku": _p(0.80, 4.0, 0.08, 1.0),
}


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


class PriceTable:
    """Looks a model up by its full name, then by its name with a date suffix removed."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self._prices: dict[str, Price] = {**DEFAULT_PRICES, **(overrides or {})}

    def price(self, model: str) -> Price | None:
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

    def billed_tokens(self, model: str, usage: Usage) -> float:
        """`usage` as the provider bills it, in plain input tokens: cached and written input weighed, output at 1×."""
        read, write = self.cache_ratios(model)
        fresh = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
        return fresh + usage.cached_tokens * read + usage.cache_write_tokens * write + usage.output_tokens

    def cost(self, model: str, usage: Usage) -> float:
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


def logged_prices(settings: Mapping[str, Any], overrides: Mapping[str, Price] | None = None) -> PriceTable:
    """The price table of a run from the settings its log recorded (prices that do not validate are skipped)."""
    table: dict[str, Price] = {}
    raw = settings.get("prices")
    if isinstance(raw, dict):
        for name, value in raw.items():
            try:
                table[str(name)] = Price.model_validate(value)
            except ValidationError:
                continue
    return PriceTable({**table, **(overrides or {})})
