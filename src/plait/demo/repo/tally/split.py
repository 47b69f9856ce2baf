"""Ways to divide one expense: equally, by weights, or by exact amounts.

Each function returns the shares as a dict from person to amount, in the order the
people were given, and the shares always add up to the amount.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation

from tally.errors import TallyError
from tally.money import ZERO, allocate, format_amount


class SplitError(TallyError):
    """A split that cannot be made."""


def split_equal(amount: Decimal, people: Sequence[str]) -> dict[str, Decimal]:
    """Everyone pays the same, give or take a cent."""
    if not people:
        raise SplitError("nobody to split the amount among")
    _check_unique(people)
    return dict(zip(people, allocate(amount, [Decimal(1)] * len(people)), strict=True))


def split_weighted(amount: Decimal, weights: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """Each person pays in proportion to a weight: {"alice": 2, "bob": 1} gives alice two thirds."""
    if not weights:
        raise SplitError("nobody to split the amount among")
    return dict(zip(weights, allocate(amount, list(weights.values())), strict=True))


def split_exact(amount: Decimal, parts: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """Each person pays the part given, and the parts must add up to the amount."""
    total = sum(parts.values(), ZERO)
    if total != amount:
        raise SplitError(f"the parts add up to {format_amount(total)}, not {format_amount(amount)}")
    return dict(parts)


def parse_assignments(text: str, parse_value: Callable[[str], Decimal]) -> dict[str, Decimal]:
    """Read "alice=2, bob=1" into {"alice": parse_value("2"), "bob": parse_value("1")}."""
    result: dict[str, Decimal] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise SplitError(f"expected name=value, got {item.strip()!r}")
        if name in result:
            raise SplitError(f"{name} appears twice")
        result[name] = parse_value(value)
    return result


def parse_weight(text: str) -> Decimal:
    """A weight such as "2" or "0.5"; it may be zero but not negative."""
    try:
        weight = Decimal(text.strip())
    except InvalidOperation:
        raise SplitError(f"not a weight: {text.strip()!r}") from None
    if not weight.is_finite() or weight < 0:
        raise SplitError(f"not a weight: {text.strip()!r}")
    return weight


def _check_unique(people: Sequence[str]) -> None:
    seen: set[str] = set()
    for person in people:
        if person in seen:
            raise SplitError(f"{person} appears twice")
        seen.add(person)
