"""Credentials out of the record: secrets are replaced before text reaches a model, the log or a report."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

__all__ = ["SECRET_ENV_PATTERNS", "Redactor"]

SECRET_ENV_PATTERNS = (
    "*_API_KEY",
    "*_TOKEN",
    "*_SECRET*",
    "*PASSWORD*",
    "*_ACCESS_KEY*",
    "SSH_AUTH_SOCK",
    "AWS_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_*",
)

_SHAPES = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{16,}|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}|xox[abpors]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    # A private key, also when capped output kept only its head (the tail is _KEY_TAIL).
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s]*))"
)
# Only from the start of a run of key characters, so that a long run without an END is scanned once, not n times.
_KEY_TAIL = re.compile(r"(?<![A-Za-z0-9+/=\n])[A-Za-z0-9+/=\n]{40,}\s*-----END [A-Z ]*PRIVATE KEY-----")
_BEARER = re.compile(r"(?i)(authorization:\s*bearer\s+|x-api-key:\s*)([^\s\"']{8,})")


class Redactor:
    """Replaces known secret values (from the environment and settings) and secret-shaped tokens."""

    def __init__(self, secrets: Iterable[str] = (), env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        values = set(secrets)
        for name, value in env.items():
            if any(fnmatch.fnmatchcase(name.upper(), p) for p in SECRET_ENV_PATTERNS):
                values.add(value)
        self._values = sorted((v for v in values if len(v) >= 8), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, "[REDACTED]")
        text = _SHAPES.sub("[REDACTED]", text)
        if "PRIVATE KEY-----" in text:
            text = _KEY_TAIL.sub("[REDACTED]", text)
        return _BEARER.sub(lambda m: m.group(1) + "[REDACTED]", text)
