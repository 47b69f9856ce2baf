"""Ledgers on disk, as JSON that people can read and put under version control."""

from __future__ import annotations

import json
import os
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from tally.errors import TallyError
from tally.ledger import Ledger

FORMAT_VERSION = 1


class StorageError(TallyError):
    """A ledger file that is missing or cannot be read."""


def ledger_to_dict(ledger: Ledger) -> dict[str, Any]:
    """The ledger as plain JSON data; amounts become strings so that no cent is lost."""
    return {
        "version": FORMAT_VERSION,
        "currency": ledger.currency,
        "people": list(ledger.people),
        "expenses": [
            {
                "description": expense.description,
                "payer": expense.payer,
                "amount": str(expense.amount),
                "shares": {name: str(share) for name, share in expense.shares.items()},
            }
            for expense in ledger.expenses
        ],
    }


def ledger_from_dict(data: dict[str, Any]) -> Ledger:
    """The inverse of `ledger_to_dict`; every expense is checked again on the way in."""
    if data.get("version") != FORMAT_VERSION:
        raise StorageError(f"unsupported ledger format: {data.get('version')!r}")
    try:
        ledger = Ledger(data["people"], currency=data["currency"])
        for item in data["expenses"]:
            ledger.add_expense(
                item["description"],
                item["payer"],
                Decimal(item["amount"]),
                {name: Decimal(share) for name, share in item["shares"].items()},
            )
    except (KeyError, TypeError, AttributeError, InvalidOperation) as exc:
        raise StorageError(f"malformed ledger: {exc!r}") from None
    return ledger


def load_ledger(path: Path) -> Ledger:
    """Read the ledger at `path`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StorageError(f"no ledger at {path}; start one with `tally init`") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StorageError(f"{path} is not valid JSON: {exc}") from None
    return ledger_from_dict(data)


def save_ledger(ledger: Ledger, path: Path) -> None:
    """Write the ledger to `path`, replacing the file only once the new one is complete."""
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(ledger_to_dict(ledger), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)
