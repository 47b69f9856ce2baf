"""Prices as the settings give them (`Price`, validated) and the table a run prices its calls with (`PriceTable`).

The rule itself (the default prices, the name lookup, cost, billed tokens and cache ratios) is plain Python in
`plait.models.rates`, so that reading a log prices it without pydantic; this table is the same rule over `Price`s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from plait.models.rates import DEFAULT_RATES, RateTable

__all__ = ["DEFAULT_PRICES", "Price", "PriceTable", "logged_prices"]


class Price(BaseModel):
    """US dollars per million tokens. Cache prices default to the input price when unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None


DEFAULT_PRICES: Mapping[str, Price] = {name: Price(**rate._asdict()) for name, rate in DEFAULT_RATES.items()}
"""The default prices (`plait.models.rates.DEFAULT_RATES`) as `Price`s."""


class PriceTable(RateTable[Price]):
    """The default prices, extended or overridden by `overrides`."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        super().__init__({**DEFAULT_PRICES, **(overrides or {})})


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
