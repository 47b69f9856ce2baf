"""`plait trust`: obey a repository's own `.plait.toml` in full, list the repositories trusted, or stop trusting one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plait.errors import EnvironmentProblem, UsageError
from plait.settings import load_settings
from plait.trust import REPO_FILE, TrustedRepo, file_digest, load_trusted, save_trusted, trust_state
from plait.ui._reading import out
from plait.workspace import Repo

__all__ = ["trust"]


def _root(path: Path) -> Path:
    return Repo.discover(path).root.resolve()


def _list() -> None:
    repos = load_trusted()
    if not repos:
        out.print("no trusted repositories: `plait trust` in one obeys its .plait.toml in full", highlight=False)
        return
    for key in sorted(repos):
        root = Path(key)
        if not root.is_dir():
            state = "not found"
        else:
            state = {"trusted": "trusted", "changed": f"{REPO_FILE} changed since: not obeyed in full"}.get(
                trust_state(root), "untrusted"
            )
        out.print(f"{key}  {state}", highlight=False)


def _remove(path: Path) -> None:
    try:
        key = str(_root(path))
    except EnvironmentProblem:
        key = str(path.expanduser().resolve())
    repos = load_trusted()
    if repos.pop(key, None) is None:
        raise UsageError(f"{key} is not a trusted repository: `plait trust --list` lists them")
    save_trusted(repos)
    out.print(f"no longer trusted: {key}; only what narrows is taken from its {REPO_FILE}", highlight=False)


def _trust(path: Path) -> None:
    root = _root(path)
    unlocked = [k for k in load_settings(root, report=None).ignored if k != "trusted_repos"]
    digest = file_digest(root)
    repos = load_trusted()
    repos[str(root)] = TrustedRepo(str(root), digest)
    saved = save_trusted(repos)
    if not digest:
        out.print(
            f"trusted {root} (in {saved}); it has no {REPO_FILE}: one added later is not obeyed in full "
            "until you trust it again",
            highlight=False,
        )
        return
    more = f", including {', '.join(unlocked)}" if unlocked else ""
    out.print(
        f"trusted {root} (in {saved}): its {REPO_FILE} (sha256 {digest[:12]}) is obeyed in full{more}; "
        "a change to it is not obeyed in full until you trust it again",
        highlight=False,
    )


def trust(
    path: Annotated[Path, typer.Argument(help="The repository (default: the one here).", show_default=False)] = Path(),
    list_: Annotated[bool, typer.Option("--list", help="List the trusted repositories.")] = False,
    remove: Annotated[
        Path | None, typer.Option("--remove", metavar="PATH", help="Stop trusting this repository.")
    ] = None,
) -> None:
    """Trust a repository with its own .plait.toml: a sandbox, limits, keys and model servers it sets are obeyed.

    Untrusted, a repository's file may only narrow what your own config allows. Trust pins the file as it is
    now: after any change to it (an agent's branch applied, say) it is not obeyed in full until you trust again.
    """
    if list_:
        _list()
    elif remove is not None:
        _remove(remove)
    else:
        _trust(path)
