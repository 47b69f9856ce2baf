"""`python -m plait` is the `plait` command."""

import sys

from plait.ui.cli import main

sys.exit(main())
