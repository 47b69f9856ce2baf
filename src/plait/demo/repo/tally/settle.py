"""Settling up: the transfers that bring every balance back to zero."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from tally.errors import TallyError
from tally.money import ZERO, format_amount


class SettleError(TallyError):
    """Balances that cannot be settled."""


@dataclass(frozen=True)
class Transfer:
    """`debtor` pays `creditor` the `amount`."""

    debtor: str
    creditor: str
    amount: Decimal

    def __str__(self) -> str:
        return f"{self.debtor} pays {self.creditor} {format_amount(self.amount)}"


def settle(balances: Mapping[str, Decimal]) -> list[Transfer]:
    """Transfers that bring all `balances` to zero, the largest debts first.

    Again and again, whoever owes the most pays whoever is owed the most, as much as
    settles one of the two. Every transfer settles at least one person, so a group of
    n people needs at most n - 1 transfers. Ties go to the name that sorts first.
    """
    if sum(balances.values(), ZERO) != 0:
        raise SettleError("the balances do not add up to zero")
    owing = {name: -amount for name, amount in balances.items() if amount < 0}
    owed = {name: amount for name, amount in balances.items() if amount > 0}
    transfers: list[Transfer] = []
    while owing:
        debtor = min(owing, key=lambda name: (-owing[name], name))
        creditor = min(owed, key=lambda name: (-owed[name], name))
        amount = min(owing[debtor], owed[creditor])
        transfers.append(Transfer(debtor, creditor, amount))
        for book, name in ((owing, debtor), (owed, creditor)):
            book[name] -= amount
            if book[name] == 0:
                del book[name]
    return transfers
