"""Repositories the user trusts with their own `.plait.toml`, listed in `~/.config/plait/trust.toml`.

A repository's `.plait.toml` is written by whoever committed it, an agent's branch included. Unless the user
trusts the repository, plait takes from it only what narrows confinement (`plait.settings`). Trust is kept
apart from `config.toml` so that plait can rewrite it without touching a file the user edits, and it pins the
`.plait.toml` it was given for: once the file changes, what it widens is ignored again until `plait trust`.

    # trust.toml
    [[repos]]
    path = "/home/me/src/project"      # the repository's root, resolved
    sha256 = "9f2c..."                 # of its .plait.toml when trusted; "" when it had none
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plait.errors import UsageError

__all__ = [
    "REPO_FILE",
    "TrustState",
    "TrustedRepo",
    "config_dir",
    "file_digest",
    "load_trusted",
    "save_trusted",
    "trust_path",
    "trust_state",
]

REPO_FILE = ".plait.toml"
"""The repository's own settings file, at its root."""

TrustState = Literal["trusted", "changed", "untrusted"]
"""trusted: listed with this very file; changed: listed, but the file is not the one trusted; untrusted: not listed."""

_HEADER = """\
# Repositories whose .plait.toml plait obeys in full; written by `plait trust`, safe to edit by hand.
# sha256 pins the file as it was when trusted ("" when there was none): once it changes, what it would
# widen (sandbox, limits, keys, model servers) is ignored again until you review it and `plait trust` again.
"""


@dataclass(frozen=True)
class TrustedRepo:
    """One trusted repository: its resolved root and the digest of the `.plait.toml` trusted."""

    path: str
    sha256: str


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """plait's directory of user configuration: `$XDG_CONFIG_HOME/plait`, else `~/.config/plait`."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "plait"


def trust_path(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "trust.toml"


def file_digest(root: Path) -> str:
    """The sha256 of the repository's `.plait.toml`, or "" when it has none."""
    import hashlib  # imported here: the read-only commands, which import this module, never hash or read trust

    try:
        return hashlib.sha256((root / REPO_FILE).read_bytes()).hexdigest()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise UsageError(f"cannot read {root / REPO_FILE}: {exc}") from exc


def _key(root: Path) -> str:
    return str(root.expanduser().resolve())


def load_trusted(env: Mapping[str, str] | None = None) -> dict[str, TrustedRepo]:
    """The trusted repositories by resolved root; none when the file does not exist."""
    import tomllib

    path = trust_path(env)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise UsageError(f"cannot read {path}: {exc}; fix it or remove it and trust again") from exc
    repos = data.get("repos", [])
    if not isinstance(repos, list) or not all(isinstance(r, dict) and isinstance(r.get("path"), str) for r in repos):
        raise UsageError(f"{path} must hold [[repos]] tables, each with a path; fix it or remove it and trust again")
    out: dict[str, TrustedRepo] = {}
    for entry in repos:
        key = _key(Path(entry["path"]))
        out[key] = TrustedRepo(key, str(entry.get("sha256", "-")))  # no pin written by hand: never matches
    return out


def _toml_str(text: str) -> str:
    # a JSON string is a TOML basic string once DEL is escaped too
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def save_trusted(repos: Mapping[str, TrustedRepo], env: Mapping[str, str] | None = None) -> Path:
    """Write the list whole (atomically), sorted by path; returns the file."""
    path = trust_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(
        f"\n[[repos]]\npath = {_toml_str(r.path)}\nsha256 = {_toml_str(r.sha256)}\n"
        for r in sorted(repos.values(), key=lambda r: r.path)
    )
    tmp = path.with_suffix(".tmp")
    tmp.write_text(_HEADER + body, encoding="utf-8")
    tmp.replace(path)
    return path


def trust_state(root: Path, env: Mapping[str, str] | None = None) -> TrustState:
    """Whether the repository at `root` is trusted with the `.plait.toml` it has now."""
    entry = load_trusted(env).get(_key(root))
    if entry is None:
        return "untrusted"
    return "trusted" if entry.sha256 == file_digest(root) else "changed"
