from decimal import Decimal

import pytest

from tally.settle import SettleError, Transfer, settle


def test_settle_the_trip(trip):
    assert settle(trip.balances()) == [
        Transfer("carol", "alice", Decimal("28.00")),
        Transfer("carol", "bob", Decimal("10.00")),
    ]


def test_settled_balances_need_no_transfers():
    assert settle({"alice": Decimal("0.00"), "bob": Decimal("0.00")}) == []


def test_transfers_bring_every_balance_to_zero():
    balances = {
        "ann": Decimal("50.00"),
        "ben": Decimal("-20.00"),
        "cem": Decimal("-45.50"),
        "dee": Decimal("25.50"),
        "eli": Decimal("-10.00"),
    }
    transfers = settle(balances)
    assert len(transfers) <= len(balances) - 1
    left = dict(balances)
    for transfer in transfers:
        assert transfer.amount > 0
        left[transfer.debtor] += transfer.amount
        left[transfer.creditor] -= transfer.amount
    assert all(amount == 0 for amount in left.values())


def test_ties_go_to_the_first_name():
    transfers = settle({"bob": Decimal("5.00"), "amy": Decimal("5.00"), "cal": Decimal("-10.00")})
    assert [str(t) for t in transfers] == ["cal pays amy 5.00", "cal pays bob 5.00"]


def test_unbalanced_balances_are_refused():
    with pytest.raises(SettleError):
        settle({"alice": Decimal("1.00")})
