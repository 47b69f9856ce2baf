"""tally: split shared expenses and work out who pays whom."""

from tally.errors import TallyError
from tally.ledger import Expense, Ledger
from tally.settle import Transfer, settle

__all__ = ["Expense", "Ledger", "TallyError", "Transfer", "settle"]
__version__ = "0.3.0"
