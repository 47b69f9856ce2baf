"""An MCP client's arguments checked before anything runs: they are text from an agent, not the user's flags."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from urllib.parse import urlparse

from plait.errors import UsageError
from plait.models.registry import SPEC_FORMS, compatible_url

__all__ = ["inside", "model_spec", "ref_name", "text"]

_MAX_TEXT = 100_000


def text(value: str, what: str) -> str:
    """A task or a question: not empty, and not a book."""
    if not value.strip():
        raise UsageError(f"the {what} is empty: say what to do")
    if len(value) > _MAX_TEXT:
        raise UsageError(f"the {what} is {len(value)} characters long: keep it under {_MAX_TEXT}")
    return value


def inside(root: Path, given: str, what: str) -> Path:
    """`given` (relative to `root`, or absolute) as an existing file under `root`, links resolved."""
    top = root.resolve()
    path = (top / given).resolve()
    if not path.is_relative_to(top):
        raise UsageError(f"{what} '{given}' is outside the repository {top}: give a path inside it")
    if not path.is_file():
        raise UsageError(f"{what} '{given}' is not a file of the repository {top}")
    return path


def ref_name(value: str, what: str) -> str:
    """A branch or commit name that git cannot read as an option, and that names one thing."""
    if not value or value.startswith("-") or any(c.isspace() or ord(c) < 0x20 for c in value):
        raise UsageError(f"{what} '{value}' is not a branch or commit name")
    return value


def _loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def model_spec(root: Path, spec: str | None, configured: str) -> str | None:
    """A model spec a client may choose: one of the known providers; a script inside the repository; an
    OpenAI-compatible server only on this machine or as configured (it is sent the user's OpenAI key)."""
    if spec is None or spec == configured:
        return spec
    provider, _, rest = spec.partition(":")
    known = ("openai", "openai-responses", "openai-chat", "anthropic")
    if provider in known and rest.strip() and not rest.startswith("-"):
        return spec
    if provider == "scripted" and rest.strip():
        return f"scripted:{inside(root, rest.strip(), 'the script')}"
    if provider == "openai-compatible":
        url = compatible_url(spec)
        if url is None:
            raise UsageError(f"model '{spec}' needs a server URL: openai-compatible:NAME@URL")
        if not _loopback(url):
            raise UsageError(
                f"model '{spec}' would send your OpenAI key to {urlparse(url).hostname}: only a server on this "
                "machine, or the model configured for this repository, may be named here"
            )
        return spec
    raise UsageError(f"model '{spec}' is not valid: use {SPEC_FORMS}")
