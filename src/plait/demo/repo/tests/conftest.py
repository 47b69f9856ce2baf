from decimal import Decimal

import pytest

from tally.ledger import Ledger
from tally.split import split_equal, split_exact

GROUP = ["alice", "bob", "carol"]


@pytest.fixture
def trip() -> Ledger:
    """Three friends away for a weekend: alice is owed 28.00, bob 10.00, and carol owes 38.00."""
    ledger = Ledger(GROUP)
    ledger.add_expense("Dinner at Luigi's", "alice", Decimal("90.00"), split_equal(Decimal("90.00"), GROUP))
    ledger.add_expense("Train tickets", "bob", Decimal("60.00"), split_equal(Decimal("60.00"), GROUP))
    ledger.add_expense(
        "Museum",
        "carol",
        Decimal("24.00"),
        split_exact(Decimal("24.00"), {"alice": Decimal("12.00"), "carol": Decimal("12.00")}),
    )
    return ledger
