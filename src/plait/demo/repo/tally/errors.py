"""The one exception type the command line reports as a message instead of a traceback."""


class TallyError(ValueError):
    """Bad input: an amount, a name, a split or a ledger file that does not make sense."""
