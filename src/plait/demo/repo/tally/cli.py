"""The `tally` command: keep a ledger in a JSON file and ask it who owes whom."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tally.errors import TallyError
from tally.ledger import Ledger
from tally.money import format_amount, parse_amount
from tally.report import render_report, render_transfers
from tally.split import parse_assignments, parse_weight, split_equal, split_exact, split_weighted
from tally.storage import load_ledger, save_ledger


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tally", description="Split shared expenses and settle up.")
    parser.add_argument(
        "-f",
        "--file",
        type=Path,
        default=Path(os.environ.get("TALLY_FILE", "tally.json")),
        help="the ledger file (default: $TALLY_FILE or ./tally.json)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    init = commands.add_parser("init", help="start a ledger for a group of people")
    init.add_argument("people", nargs="+", help="the names of the people in the group")
    init.add_argument("--currency", default="EUR", help="the currency of the amounts (default: EUR)")

    add = commands.add_parser("add", help="record an expense")
    add.add_argument("description", help='what was paid for, e.g. "Dinner"')
    add.add_argument("amount", help="how much was paid, e.g. 42.50")
    add.add_argument("--paid-by", required=True, metavar="NAME", help="who paid")
    how = add.add_mutually_exclusive_group()
    how.add_argument("--among", metavar="NAMES", help="split equally among these people (default: everyone)")
    how.add_argument("--weights", metavar="NAME=W,...", help="split in proportion to weights")
    how.add_argument("--exact", metavar="NAME=AMOUNT,...", help="split into the amounts given")

    commands.add_parser("report", help="show expenses, balances and how to settle up")
    commands.add_parser("settle", help="show only how to settle up")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = {"init": _init, "add": _add, "report": _report, "settle": _settle}[args.command]
    try:
        return command(args)
    except TallyError as exc:
        print(f"tally: {exc}", file=sys.stderr)
        return 1


def _init(args: argparse.Namespace) -> int:
    if args.file.exists():
        raise TallyError(f"{args.file} already exists")
    ledger = Ledger(args.people, currency=args.currency.upper())
    save_ledger(ledger, args.file)
    print(f"Started {args.file} for {', '.join(ledger.people)}.")
    return 0


def _add(args: argparse.Namespace) -> int:
    ledger = load_ledger(args.file)
    amount = parse_amount(args.amount)
    if args.weights:
        shares = split_weighted(amount, parse_assignments(args.weights, parse_weight))
    elif args.exact:
        shares = split_exact(amount, parse_assignments(args.exact, parse_amount))
    else:
        people = [name.strip() for name in args.among.split(",")] if args.among else ledger.people
        shares = split_equal(amount, people)
    expense = ledger.add_expense(args.description, args.paid_by, amount, shares)
    save_ledger(ledger, args.file)
    print(f"Added {expense.description}: {format_amount(expense.amount)}, paid by {expense.payer}.")
    return 0


def _report(args: argparse.Namespace) -> int:
    print(render_report(load_ledger(args.file)), end="")
    return 0


def _settle(args: argparse.Namespace) -> int:
    print(render_transfers(load_ledger(args.file)), end="")
    return 0
