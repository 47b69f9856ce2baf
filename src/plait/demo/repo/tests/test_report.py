from decimal import Decimal
from textwrap import dedent

from tally.ledger import Ledger
from tally.report import render_report, render_transfers


def test_report(trip):
    assert render_report(trip) == dedent(
        """\
        Expenses (EUR)
          Dinner at Luigi's  paid by alice   90.00
          Train tickets      paid by bob     60.00
          Museum             paid by carol   24.00
          Total                             174.00

        Balances
          alice  +28.00
          bob    +10.00
          carol  -38.00

        To settle up
          carol pays alice 28.00
          carol pays bob 10.00
        """
    )


def test_report_of_an_empty_ledger():
    assert render_report(Ledger(["alice"])) == "No expenses yet.\n"


def test_report_when_everyone_is_even():
    ledger = Ledger(["alice", "bob"])
    ledger.add_expense("Lunch", "alice", Decimal("10.00"), {"alice": Decimal("10.00")})
    assert "All settled up" in render_report(ledger)


def test_transfers_only(trip):
    assert "carol pays bob 10.00" in render_transfers(trip)
    assert "Balances" not in render_transfers(trip)
