"""`python -m plait` is the `plait` command."""

from plait.ui.cli import main

main()
