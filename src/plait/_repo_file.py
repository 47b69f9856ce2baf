"""What an untrusted repository's `.plait.toml` may set: whatever narrows, nothing that widens.

Widening, compared with the settings below the repository file (defaults and the user's file):

- `sandbox`: a weaker preset, any other OS layer, `allow_unsandboxed = true`, `network = true`, any
  `env_passthrough` beyond the user's, a command or path rule whose verdict is `allow`, a limit raised or
  `limits.cgroup = false`;
- a budget raised: `max_steps`, `max_tokens`, `max_attempts`, `max_tasks`, `command_timeout`, the model's
  `request_timeout`, `max_retries` and `retry_budget` (time spent waiting on a server), the `task_*` and `run_*`
  limits; `prices` that lower a model's known price (the dollar limits would then count too little);
- `openai_api_key`, `anthropic_api_key`: spending on a key the repository chose, which also sees the prompts;
- `model` naming an `openai-compatible` server other than this machine: it would be sent OPENAI_API_KEY
  and the prompts;
- `include_uncommitted = true`: agents would see the user's uncommitted work;
- `split = "always"`: a split runs even where the estimate says it costs more than the bound;
- `store`: the event log on a server the repository chose, which would receive every prompt, reply and output;
- `backend`, `ray_address`: agents run on a cluster the repository chose, which would be sent the keys and the code;
- `worktree_include` globs that are absolute or climb out with `..`;
- `mcp_servers` other than the user's own (a server of the file's runs its command in every agent's sandbox), and
  `sandbox.mcp` rules that allow.

Everything else is kept: narrowing (`deny` and `ask` rules, a stricter preset, lower limits) and settings with
no more power than the repository's own code, such as `setup_command` and `verify_command`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from plait.globs import escapes
from plait.models.pricing import Price, PriceTable
from plait.models.registry import compatible_url
from plait.sandbox_presets import PRESETS
from plait.sandbox_settings import Limits, SandboxSettings

if TYPE_CHECKING:
    from plait.settings import Settings

__all__ = ["narrow"]

_DROP = object()
_BUDGETS = (
    "max_steps",
    "max_tokens",
    "max_attempts",
    "max_tasks",
    "command_timeout",
    "request_timeout",
    "max_retries",
    "retry_budget",
    "task_wall_time",
    "task_max_usd",
    "task_max_tokens",
    "run_max_usd",
    "run_max_tokens",
    "run_wall_time",
)
_PRESET_RANK = {"strict": 0, "standard": 1, "trusted": 2}

Check = Callable[[Any, "Settings"], tuple[Any, list[str]]]
"""(value, settings below) -> (the value kept or `_DROP`, the dotted keys ignored)."""


def _coerce(model: BaseModel, key: str, value: Any) -> Any:
    """`value` as `model`'s field `key` would hold it; `_DROP` when invalid (the final validation reports it)."""
    try:
        return getattr(type(model).model_validate({**model.model_dump(), key: value}), key)
    except ValidationError:
        return _DROP


def _raised(new: Any, old: Any) -> bool:
    """Whether `new` is a looser bound than `old` (None is no bound); bools: True loosens."""
    if new is _DROP or old is None:
        return False
    if isinstance(old, bool):
        return bool(new) and not old
    return new is None or new > old


def local_server(url: str) -> bool:
    """Whether `url` is a server on this machine: `localhost` or a loopback address, with no user part."""
    parts = urlsplit(url)
    if "@" in parts.netloc or "\\" in url or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def _budget(key: str) -> Check:
    def check(value: Any, base: Settings) -> tuple[Any, list[str]]:
        return (_DROP, [key]) if _raised(_coerce(base, key, value), getattr(base, key)) else (value, [])

    return check


def _never(key: str) -> Check:
    return lambda value, base: (_DROP, [key])


def _model(value: Any, base: Settings) -> tuple[Any, list[str]]:
    url = compatible_url(value) if isinstance(value, str) else None
    return (_DROP, ["model"]) if url is not None and not local_server(url) else (value, [])


def _uncommitted(value: Any, base: Settings) -> tuple[Any, list[str]]:
    new = _coerce(base, "include_uncommitted", value)
    return (_DROP, ["include_uncommitted"]) if _raised(new, base.include_uncommitted) else (value, [])


def _split(value: Any, base: Settings) -> tuple[Any, list[str]]:
    """`split = "always"` spends past the bound the estimate keeps a split to: a budget the user raises, not the
    repository."""
    return (_DROP, ["split"]) if value == "always" and base.split != "always" else (value, [])


def _includes(value: Any, base: Settings) -> tuple[Any, list[str]]:
    if not isinstance(value, list):
        return value, []
    inside = [p for p in value if not (isinstance(p, str) and escapes(p))]
    return inside, ([] if len(inside) == len(value) else ["worktree_include"])


def _lower(new: Price, old: Price) -> bool:
    def cached(p: Price) -> float:
        return p.cached_input if p.cached_input is not None else p.input

    def write(p: Price) -> float:
        return p.cache_write if p.cache_write is not None else p.input

    pairs = [(new.input, old.input), (new.output, old.output), (cached(new), cached(old)), (write(new), write(old))]
    return any(a < b for a, b in pairs)


def _prices(value: Any, base: Settings) -> tuple[Any, list[str]]:
    if not isinstance(value, dict):
        return value, []
    table = PriceTable(base.prices)
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for name, raw in value.items():
        known = table.price(name)
        try:
            lower = known is not None and _lower(Price.model_validate(raw), known)
        except ValidationError:
            lower = False
        if lower:
            ignored.append(f"prices.{name}")
        else:
            kept[name] = raw
    return (kept if kept or not ignored else _DROP), ignored


def _limits(value: Any, base: Limits) -> tuple[Any, list[str]]:
    if not isinstance(value, dict):
        return value, []
    numbers = {k: v for k, v in value.items() if k != "cgroup"}
    wider = [k for k, v in numbers.items() if _raised(_coerce(base, k, v), getattr(base, k, None))]
    if base.cgroup and value.get("cgroup") is False:
        wider.append("cgroup")
    return {k: v for k, v in value.items() if k not in wider}, [f"sandbox.limits.{k}" for k in wider]


def _rules(key: str, value: Any) -> tuple[Any, list[str]]:
    if not isinstance(value, list):
        return value, []
    allowing = [i for i, r in enumerate(value) if isinstance(r, dict) and r.get("verdict") == "allow"]
    return [r for i, r in enumerate(value) if i not in allowing], [f"sandbox.{key}[{i}]" for i in allowing]


def _network_open(sandbox: SandboxSettings) -> bool:
    return bool(sandbox.network) if sandbox.network is not None else PRESETS[sandbox.preset]["network"] == "allow"


def _sandbox_key(key: str, value: Any, base: SandboxSettings) -> tuple[Any, list[str]]:
    wider = False
    if key == "preset":
        wider = _PRESET_RANK.get(value, 0) > _PRESET_RANK[base.preset]
    elif key == "layer":
        wider = value != base.layer
    elif key == "allow_unsandboxed":
        wider = _raised(_coerce(base, key, value), base.allow_unsandboxed)
    elif key == "network":
        wider = value is True and not _network_open(base)
    elif key == "env_passthrough":
        wider = isinstance(value, list) and any(v not in base.env_passthrough for v in value)
    elif key in ("commands", "paths", "mcp"):
        return _rules(key, value)
    elif key == "limits":
        return _limits(value, base.limits)
    return (_DROP, [f"sandbox.{key}"]) if wider else (value, [])


def _sandbox(value: Any, base: Settings) -> tuple[Any, list[str]]:
    if not isinstance(value, dict):
        return value, []
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, raw in value.items():
        new, dropped = _sandbox_key(key, raw, base.sandbox)
        ignored += dropped
        if new is not _DROP and not (dropped and new in ({}, [])):
            kept[key] = new
    return (kept if kept or not ignored else _DROP), ignored


def _servers(value: Any, base: Settings) -> tuple[Any, list[str]]:
    """MCP servers: the user's may be left out, none added or changed (each would run a command of the file's)."""
    if not isinstance(value, dict):
        return value, []
    same = {
        k: v
        for k, v in value.items()
        if k in base.mcp_servers and _coerce(base, "mcp_servers", {k: v}) == {k: base.mcp_servers[k]}
    }
    return same, [f"mcp_servers.{k}" for k in value if k not in same]


_CHECKS: dict[str, Check] = {
    **{key: _budget(key) for key in _BUDGETS},
    "openai_api_key": _never("openai_api_key"),
    "anthropic_api_key": _never("anthropic_api_key"),
    "store": _never("store"),
    "backend": _never("backend"),
    "ray_address": _never("ray_address"),
    "agent": _never("agent"),  # a command template runs what it says, and an external agent spends the user's key
    "model": _model,
    "include_uncommitted": _uncommitted,
    "split": _split,
    "worktree_include": _includes,
    "prices": _prices,
    "sandbox": _sandbox,
    "mcp_servers": _servers,
}


def narrow(values: dict[str, Any], base: Settings) -> tuple[dict[str, Any], list[str]]:
    """The repository file's `values` that do not widen `base` (the settings below it), and the keys dropped.

    A value that is not valid is kept as it is, for the final validation to report with the file's name.
    """
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in values.items():
        check = _CHECKS.get(key)
        new, dropped = check(value, base) if check else (value, [])
        ignored += dropped
        if new is not _DROP:
            kept[key] = new
    return kept, ignored
