"""Credentials out of the record: secrets are replaced before text reaches a model, the log or a report.

What is secret: the values of environment variables named like credentials (`*_API_KEY`, `*TOKEN*`,
`*PASSWORD*`...) and of any variable whose value looks like one (a known token shape, a long random-looking
string, a URL with a password), values given explicitly (configured API keys), and, in any text, tokens of a
known shape, private keys, bearer headers and the password of a URL (`scheme://user:PASSWORD@host`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "SECRET_ENV_PATTERNS", "Redactor", "looks_secret", "scrub_strings", "strings_in"]

REDACTED = "[REDACTED]"

SECRET_ENV_PATTERNS = (
    "*_API_KEY",
    "*_KEY",
    "*TOKEN*",
    "*SECRET*",
    "*PASSW*",
    "*_PAT",
    "*CREDENTIAL*",
    "*_ACCESS_KEY*",
    "*_DSN",
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
_BEARER_HINTS = ("authorization:", "x-api-key:")
"""What any match of `_BEARER` holds; in ASCII text, which `str.lower` folds as the pattern's case-blindness does."""
_URL_PASSWORD = re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^\s:/@\"'<>]*:)([^\s@/?#\"'<>]+)(@)")
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~]{16,}")
_MIN_LENGTH = 8
"""Shorter values are not replaced wherever they occur: they would hit ordinary words and numbers."""


def looks_secret(value: str) -> bool:
    """Whether a value, whatever its variable is called, looks like a credential.

    A known token shape, or a long string of token characters mixing upper and lower case letters and digits
    (a path, a commit id, a UUID or a version does not).
    """
    if _SHAPES.fullmatch(value):
        return True
    if not _TOKEN.fullmatch(value) or value[0] in "/.~":
        return False
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def _env_secrets(env: Mapping[str, str]) -> set[str]:
    found = set()
    for name, value in env.items():
        if any(fnmatch.fnmatchcase(name.upper(), p) for p in SECRET_ENV_PATTERNS) or looks_secret(value):
            found.add(value)
        found.update(m.group(2) for m in _URL_PASSWORD.finditer(value))
    return found


class Redactor:
    """Replaces known secret values (from the environment and settings) and secret-shaped tokens.

    Redacting twice changes nothing more than redacting once: a resumed run redacts again what its log holds.
    """

    def __init__(self, secrets: Iterable[str] = (), env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        values = set(secrets) | _env_secrets(env)
        self._values = sorted((v for v in values if len(v) >= _MIN_LENGTH and v not in REDACTED), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        text = _SHAPES.sub(REDACTED, text)
        if "PRIVATE KEY-----" in text:
            text = _KEY_TAIL.sub(REDACTED, text)
        if "://" in text:
            text = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + m.group(3), text)
        if text.isascii() and not any(hint in text.lower() for hint in _BEARER_HINTS):
            return text  # the slowest pattern, case-blind at every position: skipped where it cannot match
        return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)

    def finds_nothing(self, texts: Iterable[str]) -> bool:
        """Whether redacting would leave each of `texts` as it is, found in one pass over them all.

        The texts are joined by newlines. Whatever redacting one text changes, redacting the joined text changes
        too: a value or shape found in one is found at the same place in the whole, and a match begun in the text
        before can reach past a newline only where a pattern allows whitespace, a match that changes the text as
        well. So True is exact; False may only mean that a match crosses from one text into the next (the texts
        are then redacted one by one).
        """
        joined = "\n".join(texts)
        return self(joined) == joined


def scrub_strings(value: Any, change: Callable[[str], str]) -> Any:
    """A JSON-like value (dicts, lists, strings, numbers) with every string in it, keys too, passed through `change`."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k) if isinstance(k, str) else k: scrub_strings(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_strings(v, change) for v in value]
    return value


def strings_in(value: Any) -> list[str]:
    """Every string in a JSON-like value, keys too (what `scrub_strings` would pass through its function), in no
    particular order."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found
