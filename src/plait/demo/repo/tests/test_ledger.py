from decimal import Decimal

import pytest

from tally.ledger import Ledger, LedgerError


def test_balances(trip):
    assert trip.balances() == {"alice": Decimal("28.00"), "bob": Decimal("10.00"), "carol": Decimal("-38.00")}
    assert sum(trip.balances().values()) == 0


def test_total_spent(trip):
    assert trip.total_spent() == Decimal("174.00")


def test_new_ledger_is_balanced():
    ledger = Ledger(["alice", "bob"])
    assert ledger.balances() == {"alice": Decimal("0.00"), "bob": Decimal("0.00")}
    assert ledger.total_spent() == Decimal("0.00")


def test_people_are_stripped_and_unique():
    ledger = Ledger([" alice "])
    assert ledger.people == ["alice"]
    with pytest.raises(LedgerError, match="already"):
        ledger.add_person("alice")
    with pytest.raises(LedgerError, match="cannot contain"):
        ledger.add_person("bob=1")


def test_expense_needs_known_people(trip):
    with pytest.raises(LedgerError, match="dave is not in the ledger"):
        trip.add_expense("Taxi", "dave", Decimal("10.00"), {"alice": Decimal("10.00")})
    with pytest.raises(LedgerError, match="dave is not in the ledger"):
        trip.add_expense("Taxi", "alice", Decimal("10.00"), {"dave": Decimal("10.00")})


def test_shares_must_add_up(trip):
    with pytest.raises(LedgerError, match="add up to 9.00, not 10.00"):
        trip.add_expense("Taxi", "alice", Decimal("10.00"), {"alice": Decimal("9.00")})
    assert len(trip.expenses) == 3


def test_expense_needs_a_description(trip):
    with pytest.raises(LedgerError, match="description"):
        trip.add_expense("  ", "alice", Decimal("1.00"), {"alice": Decimal("1.00")})
