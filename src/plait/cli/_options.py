"""The options and arguments many commands declare alike: the repository to work on, JSON output, the run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["JsonOpt", "RepoOpt", "RunArg"]

RepoOpt = Annotated[Path, typer.Option("--repo", "-C", help="The git repository to work on.", show_default=False)]
"""`--repo`/`-C`: the git repository to work on (the current directory by default)."""
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
"""`--json`: machine-readable JSON on stdout."""
RunArg = Annotated[str, typer.Argument(metavar="RUN", help="A run id, a unique prefix of one, or `last`.")]
"""RUN: the run a command reads or acts on."""
