from decimal import Decimal

import pytest

from tally.money import parse_amount
from tally.split import (
    SplitError,
    parse_assignments,
    parse_weight,
    split_equal,
    split_exact,
    split_weighted,
)


def test_split_equal_keeps_order_and_adds_up():
    shares = split_equal(Decimal("10.00"), ["carol", "alice", "bob"])
    assert list(shares) == ["carol", "alice", "bob"]
    assert shares == {"carol": Decimal("3.34"), "alice": Decimal("3.33"), "bob": Decimal("3.33")}


def test_split_equal_needs_people():
    with pytest.raises(SplitError, match="nobody"):
        split_equal(Decimal("10.00"), [])


def test_split_equal_rejects_duplicates():
    with pytest.raises(SplitError, match="alice appears twice"):
        split_equal(Decimal("10.00"), ["alice", "bob", "alice"])


def test_split_weighted():
    shares = split_weighted(Decimal("90.00"), {"alice": Decimal(2), "bob": Decimal(1)})
    assert shares == {"alice": Decimal("60.00"), "bob": Decimal("30.00")}


def test_split_exact_must_add_up():
    parts = {"alice": Decimal("5.00"), "bob": Decimal("4.00")}
    assert split_exact(Decimal("9.00"), parts) == parts
    with pytest.raises(SplitError, match="add up to 9.00, not 10.00"):
        split_exact(Decimal("10.00"), parts)


def test_parse_assignments():
    assert parse_assignments("alice=2, bob=0.5", parse_weight) == {"alice": Decimal(2), "bob": Decimal("0.5")}
    assert parse_assignments("alice=12.5", parse_amount) == {"alice": Decimal("12.50")}


@pytest.mark.parametrize("text", ["alice", "=2", "alice=1,alice=2"])
def test_parse_assignments_rejects(text):
    with pytest.raises(SplitError):
        parse_assignments(text, parse_weight)


@pytest.mark.parametrize("text", ["-1", "two", "inf"])
def test_parse_weight_rejects(text):
    with pytest.raises(SplitError, match="not a weight"):
        parse_weight(text)
