"""A ledger: the people in a group and the expenses they share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from tally.errors import TallyError
from tally.money import ZERO, format_amount


class LedgerError(TallyError):
    """An expense or a person the ledger cannot accept."""


@dataclass(frozen=True)
class Expense:
    """Something one person paid for and several people owe a share of."""

    description: str
    payer: str
    amount: Decimal
    shares: Mapping[str, Decimal]
    """What each person owes of `amount`; the shares add up to it."""


class Ledger:
    """The people of a group and, in the order they were added, their expenses."""

    def __init__(self, people: Iterable[str] = (), currency: str = "EUR") -> None:
        self.currency = currency
        self.people: list[str] = []
        self.expenses: list[Expense] = []
        for person in people:
            self.add_person(person)

    def add_person(self, name: str) -> str:
        """Add someone to the group and return the name as stored (without outer spaces)."""
        name = name.strip()
        if not name:
            raise LedgerError("a name cannot be empty")
        if any(c in name for c in ",="):
            raise LedgerError(f"a name cannot contain ',' or '=': {name!r}")
        if name in self.people:
            raise LedgerError(f"{name} is already in the ledger")
        self.people.append(name)
        return name

    def add_expense(
        self,
        description: str,
        payer: str,
        amount: Decimal,
        shares: Mapping[str, Decimal],
    ) -> Expense:
        """Record that `payer` paid `amount` for the people in `shares`."""
        description = description.strip()
        if not description:
            raise LedgerError("an expense needs a description")
        self._check_known(payer)
        for person in shares:
            self._check_known(person)
        owed = sum(shares.values(), ZERO)
        if owed != amount:
            raise LedgerError(
                f"the shares of {description!r} add up to {format_amount(owed)}, not {format_amount(amount)}"
            )
        expense = Expense(description, payer, amount, dict(shares))
        self.expenses.append(expense)
        return expense

    def total_spent(self) -> Decimal:
        """The sum of all expenses."""
        return sum((e.amount for e in self.expenses), ZERO)

    def balances(self) -> dict[str, Decimal]:
        """What each person is owed (positive) or owes (negative); the balances add up to zero."""
        result = {person: ZERO for person in self.people}
        for expense in self.expenses:
            result[expense.payer] += expense.amount
            for person, share in expense.shares.items():
                result[person] -= share
        return result

    def _check_known(self, name: str) -> None:
        if name not in self.people:
            known = ", ".join(self.people) or "nobody yet"
            raise LedgerError(f"{name} is not in the ledger (known: {known})")
