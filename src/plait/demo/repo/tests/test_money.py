from decimal import Decimal

import pytest

from tally.money import MoneyError, allocate, format_amount, parse_amount


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12", "12.00"),
        ("12.5", "12.50"),
        (" 0.99 ", "0.99"),
        ("-3.20", "-3.20"),
        ("1,250", "1250.00"),
        ("12,345,678.90", "12345678.90"),
    ],
)
def test_parse_amount(text, expected):
    assert parse_amount(text) == Decimal(expected)


@pytest.mark.parametrize("text", ["", "abc", "1.234", "12,34", "1e3", "--1", "12.", "NaN"])
def test_parse_amount_rejects(text):
    with pytest.raises(MoneyError, match="not an amount"):
        parse_amount(text)


def test_format_amount():
    assert format_amount(Decimal("1234.5")) == "1,234.50"
    assert format_amount(Decimal("-0.125")) == "-0.12"
    assert format_amount(Decimal("7")) == "7.00"


def test_allocate_equal_parts_add_up():
    parts = allocate(Decimal("100.00"), [Decimal(1)] * 3)
    assert parts == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]
    assert sum(parts) == Decimal("100.00")


def test_allocate_gives_leftover_cents_to_the_largest_losses():
    parts = allocate(Decimal("10.00"), [Decimal(1), Decimal(2), Decimal(4)])
    assert parts == [Decimal("1.43"), Decimal("2.86"), Decimal("5.71")]


def test_allocate_negative_total():
    assert allocate(Decimal("-1.00"), [Decimal(1)] * 3) == [Decimal("-0.34"), Decimal("-0.33"), Decimal("-0.33")]


def test_allocate_zero_weight_gets_nothing():
    assert allocate(Decimal("5.00"), [Decimal(0), Decimal(1)]) == [Decimal("0.00"), Decimal("5.00")]


@pytest.mark.parametrize("weights", [[], [Decimal(0)], [Decimal(1), Decimal(-1)]])
def test_allocate_rejects_bad_weights(weights):
    with pytest.raises(MoneyError):
        allocate(Decimal("1.00"), weights)
