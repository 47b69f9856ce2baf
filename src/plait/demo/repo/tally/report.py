"""A plain-text summary of a ledger: what was spent, who stands where, how to settle up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from tally.ledger import Ledger
from tally.money import format_amount
from tally.settle import settle


def render_report(ledger: Ledger) -> str:
    """The expenses, the balance of each person, and the transfers that settle them."""
    if not ledger.expenses:
        return "No expenses yet.\n"
    balances = ledger.balances()
    sections = [
        f"Expenses ({ledger.currency})\n" + _expenses_table(ledger),
        "Balances\n" + _balances_table(balances),
        _settle_up(balances),
    ]
    return "\n\n".join(sections) + "\n"


def render_transfers(ledger: Ledger) -> str:
    """Only the transfers, one a line."""
    return _settle_up(ledger.balances()) + "\n"


def _expenses_table(ledger: Ledger) -> str:
    rows = [(e.description, f"paid by {e.payer}", format_amount(e.amount)) for e in ledger.expenses]
    rows.append(("Total", "", format_amount(ledger.total_spent())))
    return _table(rows)


def _balances_table(balances: Mapping[str, Decimal]) -> str:
    return _table([(person, _signed(amount)) for person, amount in balances.items()])


def _settle_up(balances: Mapping[str, Decimal]) -> str:
    transfers = settle(balances)
    if not transfers:
        return "All settled up."
    return "To settle up\n" + "\n".join(f"  {transfer}" for transfer in transfers)


def _signed(amount: Decimal) -> str:
    return ("+" if amount > 0 else "") + format_amount(amount)


def _table(rows: Sequence[tuple[str, ...]]) -> str:
    """Indented columns; text is aligned left and the last column, the amounts, right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
        cells.append(row[-1].rjust(widths[-1]))
        lines.append("  " + "  ".join(cells))
    return "\n".join(lines)
