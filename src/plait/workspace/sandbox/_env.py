"""The environment of an agent's commands: an allow-list, never this process's environment minus a deny-list."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence

__all__ = ["ALLOWED_ENV", "command_env"]

ALLOWED_ENV = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "VIRTUAL_ENV",
)
"""Variables passed from plait's environment to commands; everything else (keys, tokens, database URLs, sockets,
whatever their names) stays behind unless the user's `sandbox.env_passthrough` names it."""


def command_env(
    base: Mapping[str, str],
    *,
    home: str,
    tmpdir: str,
    extra: Mapping[str, str] | None = None,
    passthrough: Sequence[str] = (),
) -> dict[str, str]:
    """The allow-listed part of `base`, what the user passes through, plait's own variables (`extra`, such as the
    agent's ports), and a throwaway HOME and TMPDIR; git prompts and pagers off."""
    keep = (*ALLOWED_ENV, *passthrough)
    env = {k: v for k, v in base.items() if any(fnmatch.fnmatchcase(k, p) for p in keep)}
    env.update(extra or {})
    env.update(
        HOME=home,
        TMPDIR=tmpdir,
        GIT_TERMINAL_PROMPT="0",
        PAGER="cat",
        GIT_PAGER="cat",
    )
    return env
