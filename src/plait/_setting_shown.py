"""How `plait config` shows a setting's value, how a key is named as a user writes it, and the error of a setting
that cannot be taken."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection
from typing import Any, get_args

from pydantic import BaseModel, SecretStr

from plait.errors import ConfigError
from plait.redact import Redactor

__all__ = ["KEY_ENV", "BrokenSetting", "did_you_mean", "dotted", "known_keys", "mark_sources", "shown"]

KEY_ENV = {"openai_api_key": "OPENAI_API_KEY", "anthropic_api_key": "ANTHROPIC_API_KEY"}
"""The environment variable each key setting falls back to when it is unset."""


class BrokenSetting(ConfigError):
    """A setting that cannot be taken; `key` is its top-level name, or the path of a file that cannot be read."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


def did_you_mean(key: str, known: Collection[str]) -> str:
    """`; did you mean X?` for the known key closest to `key`, or nothing when none is close."""
    close = difflib.get_close_matches(key, list(known), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


_MASK = Redactor(env={})


def shown(value: object) -> str:
    """A setting's value on one line: a secret masked, a table as JSON, the password of a URL redacted."""
    if isinstance(value, SecretStr):
        raw = value.get_secret_value()
        return "****" + raw[-4:] if len(raw) > 12 else "****"
    if isinstance(value, dict):
        return json.dumps({k: v.model_dump() if isinstance(v, BaseModel) else v for k, v in value.items()})
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_defaults=True) or "{}"
    if isinstance(value, list) and any(isinstance(v, BaseModel) for v in value):
        return json.dumps([v.model_dump(exclude_defaults=True) if isinstance(v, BaseModel) else v for v in value])
    return "" if value is None else _MASK(str(value))  # the password of a URL (the store's) too


def dotted(loc: tuple[int | str, ...]) -> str:
    """A key as a user writes it: `sandbox.limits.memory_mb`, `experts[0].name`, `prices."openai:x".input`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = part if re.fullmatch(r"[\w-]+", part) else json.dumps(part)
            out += f".{name}" if out else name
    return out


def mark_sources(sources: dict[str, str], loc: tuple[int | str, ...], value: Any, label: str) -> None:
    """`loc` and every key below it came from `label`."""
    sources[dotted(loc)] = label
    if isinstance(value, dict):
        for key, inner in value.items():
            mark_sources(sources, (*loc, str(key)), inner, label)


def known_keys(root: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """The keys the table at `loc` of `root` takes, to name beside an unknown one."""
    kind: Any = root
    for part in loc:
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            field = kind.model_fields.get(str(part))
            kind = field.annotation if field else None
        else:  # an entry of a list or a table of models
            kind = (get_args(kind) or (None,))[-1]
    return ", ".join(kind.model_fields) if isinstance(kind, type) and issubclass(kind, BaseModel) else ""
