"""What the read-only commands share, without the command-line machinery: the consoles, the settings they read,
opening a repository's event log and naming a run in it.

`plait runs`, `status`, `show`, `log` and `cost` are started without typer (`plait.cli._fast`), so nothing here
imports it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.errors import EnvironmentProblem, UsageError
from plait.trust import REPO_FILE, config_dir

if TYPE_CHECKING:  # the event log and the settings are imported where used: `plait --help` needs neither
    from rich.console import Console

    from plait.events.store import EventStore
    from plait.redact import Redactor
    from plait.settings import Settings
    from plait.workspace import Repo

__all__ = [
    "SETTING_NAMES",
    "console",
    "has_log",
    "open_store",
    "pick_run",
    "read_redactor",
    "renew_consoles",
    "resolve_run",
    "settings_if_any",
    "write_line",
]


def console(**options: Any) -> Console:
    """A rich console; with `NO_COLOR` set (to anything but nothing) it writes no style at all, not even bold
    (rich alone drops only the colours)."""
    from rich.console import Console

    return Console(**_colour(options))


def _colour(options: dict[str, Any]) -> dict[str, Any]:
    return {**options, "color_system": None} if os.environ.get("NO_COLOR") else options


_SHARED: dict[str, dict[str, Any]] = {"out": {"soft_wrap": True}, "err": {"stderr": True}}


def __getattr__(name: str) -> Console:
    """`out` and `err`, the consoles of stdout and stderr, made on first use: `plait log` writes without rich."""
    if name not in _SHARED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = console(**_SHARED[name])
    globals()[name] = made  # the same console from now on, without this function
    return made


def renew_consoles() -> None:
    """Make `out` and `err` again, where made, as the environment now says (`NO_COLOR`, `COLUMNS`, a forced
    terminal): each command run in this process (`plait.cli.main`) reads it afresh, as a new process would."""
    made = [name for name in _SHARED if name in globals()]
    if made:
        from rich.console import Console

        for name in made:  # the same objects, which the modules that imported them hold
            Console.__init__(globals()[name], **_colour(_SHARED[name]))


def write_line(line: str) -> None:
    """Print `line` on stdout; a reader that went away (`plait log RUN | head`) ends the command quietly."""
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # stop quietly, without a traceback at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0) from None


SETTING_NAMES = frozenset(
    "model agent max_steps max_tokens max_output_tokens context_tokens max_format_errors command_timeout output_limit"
    " instructions_chars request_timeout max_retries retry_budget concurrency split max_attempts max_tasks"
    " task_wall_time task_max_usd task_max_tokens run_max_usd run_max_tokens run_wall_time leases lease_wait"
    " shared_files radar_interval worktree_include layered_worktrees setup_command port_block include_uncommitted"
    " openai_api_key anthropic_api_key prices verify_command low_confidence_to_llm sandbox mcp_servers experts store"
    " backend ray_address task_cpus task_memory_mb".split()
)
"""The fields of `plait.settings.Settings` (a test keeps the two equal): each is also `PLAIT_<NAME>`."""


def settings_if_any(root: Path, env: Mapping[str, str] | None = None) -> Settings | None:
    """The settings for `root` as `load_settings(root, report=None)` gives them, or None when no layer sets any
    (no user file, no repository file, no `PLAIT_*` setting in the environment): then every setting is its default,
    and the settings' models need not be imported. A notice of keys ignored is the caller's to print."""
    env = os.environ if env is None else env
    layers = (config_dir(env) / "config.toml", root / REPO_FILE)
    if not any(f"PLAIT_{name.upper()}" in env for name in SETTING_NAMES) and not any(
        os.path.lexists(path) for path in layers
    ):
        return None
    from plait.settings import load_settings

    return load_settings(root, env=env, report=None).settings


def read_redactor(root: Path) -> Redactor:
    """The redactor a read-only command shows events through: the environment's secrets and the configured API
    keys; the notice of a repository file's ignored keys goes to stderr, as every command says it."""
    if settings_if_any(root) is None:
        from plait.redact import Redactor

        return Redactor([])
    from plait.settings import load_settings
    from plait.ui.feed import make_redactor

    return make_redactor(load_settings(root).settings)


def _store_location(repo: Repo) -> str:
    settings = settings_if_any(repo.root)
    return settings.store if settings is not None else ""


def open_store(repo: Repo, *, create: bool) -> EventStore:
    """The repository's event log, where the `store` setting says (the SQLite file in .git/plait by default);
    without `create`, a repository with no SQLite log is an error.

    The setting is read from the user's configuration, never from a run: `plait resume` finds the run there.
    """
    from plait.events.backends import open_event_store
    from plait.workspace.scope import store_scope

    location = _store_location(repo)
    path = repo.common_dir / "plait" / "events.db"
    if not location and not create and not path.exists():
        raise EnvironmentProblem(f"no plait runs in {repo.root} yet: start one with `plait run TASK`")
    return open_event_store(location, path, scope=store_scope(repo) if location else "")


def has_log(repo: Repo) -> bool:
    """Whether the repository has an event log to read (a server always has one)."""
    return bool(_store_location(repo)) or (repo.common_dir / "plait/events.db").exists()


def resolve_run(store: EventStore, ref: str, *, acts_on: Callable[[str], bool] | None = None, what: str = "") -> str:
    """A run id from an id, a unique prefix of one, or `last`: the latest run the command can act on (`acts_on`,
    `what` naming such a run: `last` after a session means the latest change for `plait apply`)."""
    return pick_run(store.run_ids(), ref, acts_on=acts_on, what=what)


def pick_run(ids: list[str], ref: str, *, acts_on: Callable[[str], bool] | None = None, what: str = "") -> str:
    """The run of `ids` (oldest first) that `ref` names, as `resolve_run` says."""
    if ref == "last" and ids:
        fit = next((i for i in reversed(ids) if acts_on is None or acts_on(i)), None)
        if fit is None:
            raise UsageError(f"no {what or 'run'} in this repository to take as `last`: `plait runs` lists the runs")
        return fit
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run '{ref}' in this repository: `plait runs` lists them")
    raise UsageError(f"'{ref}' matches {len(matches)} runs: give more of the id")
