"""The options many commands declare alike: the repository to work on and JSON output."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["JsonOpt", "RepoOpt"]

RepoOpt = Annotated[Path, typer.Option("--repo", "-C", help="The git repository to work on.", show_default=False)]
"""`--repo`/`-C`: the git repository to work on (the current directory by default)."""
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
"""`--json`: machine-readable JSON on stdout."""
