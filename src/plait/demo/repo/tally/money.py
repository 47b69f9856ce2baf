"""Amounts of money as `Decimal`, always to the cent.

Floats never touch an amount: `parse_amount` reads what a user typed, `allocate`
divides a total into parts that add up to it exactly, and `format_amount` prints one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal

from tally.errors import TallyError

CENT = Decimal("0.01")
ZERO = Decimal("0.00")

# "12", "-3.5", "1,250.00"; thousands separators must be in the right places.
_AMOUNT = re.compile(r"[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d{1,2})?")


class MoneyError(TallyError):
    """An amount that cannot be read or divided."""


def parse_amount(text: str) -> Decimal:
    """Read "12", "12.5", "-3.20" or "1,250" as a Decimal with two places."""
    cleaned = text.strip()
    if not _AMOUNT.fullmatch(cleaned):
        raise MoneyError(f"not an amount: {text!r}")
    return Decimal(cleaned.replace(",", "")).quantize(CENT)


def to_cents(amount: Decimal) -> Decimal:
    """`amount` rounded to the cent, halves to even."""
    return amount.quantize(CENT, rounding=ROUND_HALF_EVEN)


def format_amount(amount: Decimal) -> str:
    """Two decimals and thousands separators: Decimal("-1234.5") gives "-1,234.50"."""
    return f"{to_cents(amount):,.2f}"


def allocate(total: Decimal, weights: Sequence[Decimal]) -> list[Decimal]:
    """Divide `total` in proportion to `weights` into parts that add up to it exactly.

    Each part is first rounded towards zero to the cent; the cents left over then go,
    one each, to the parts that lost the most in rounding (the earliest on a tie).
    """
    if not weights:
        raise MoneyError("cannot divide an amount among no one")
    if any(weight < 0 for weight in weights):
        raise MoneyError("weights must not be negative")
    weight_sum = sum(weights, Decimal(0))
    if weight_sum == 0:
        raise MoneyError("at least one weight must be more than zero")

    cents = int(to_cents(total) / CENT)
    sign = -1 if cents < 0 else 1
    exact = [abs(cents) * weight / weight_sum for weight in weights]
    parts = [int(share) for share in exact]
    leftover = abs(cents) - sum(parts)
    by_loss = sorted(range(len(parts)), key=lambda i: (parts[i] - exact[i], i))
    for i in by_loss[:leftover]:
        parts[i] += 1
    return [sign * part * CENT for part in parts]
