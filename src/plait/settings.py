"""One settings object, layered: defaults < user file < repository file < PLAIT_* env < flags."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, SecretStr, ValidationError

from plait.errors import UsageError
from plait.models.pricing import Price
from plait.plan.model import ExpertSpec
from plait.workspace.policy import SandboxSettings

__all__ = ["LayeredSettings", "Settings", "load_settings", "run_settings", "user_config_path"]


class Settings(BaseModel):
    """Every knob of plait. Each field is also `PLAIT_<NAME>` in the environment and a TOML key."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model: str = "openai:gpt-5.1"
    """The model agents use: `openai:NAME`, `anthropic:NAME`, `openai-compatible:NAME@URL`, `scripted:FILE`."""
    max_steps: int = Field(60, ge=1)
    """Model calls an agent may make before it is stopped."""
    max_tokens: int = Field(3_000_000, ge=1)
    """Input plus output tokens an agent may spend before it is stopped."""
    max_output_tokens: int = Field(8192, ge=1)
    """Largest reply asked of the model in one call."""
    context_tokens: dict[str, PositiveInt] = {}
    """Context budget in tokens by model-name glob, such as `{"anthropic:claude-*" = 200000}`; an agent's older
    steps are summarised when a request nears 80% of it. Checked before the built-in budgets of known model
    families (the longest matching glob wins; 128000 for a model nothing matches)."""
    max_format_errors: int = Field(3, ge=1)
    """Consecutive malformed tool calls after which an agent fails."""
    command_timeout: float = Field(300.0, gt=0)
    """Seconds a command run by an agent may take; the whole process tree is killed after."""
    output_limit: int = Field(16_000, ge=200)
    """Characters of tool output shown to the model; the head and tail are kept."""
    request_timeout: float = Field(600.0, gt=0)
    """Seconds to wait for one model reply."""
    max_retries: int = Field(6, ge=0)
    """Retries of a model call on 429, 5xx, timeouts and connection errors."""
    concurrency: int = Field(4, ge=1)
    """Agents that may work at the same time (most APIs rate-limit well before CPUs run out)."""
    max_attempts: int = Field(2, ge=1)
    """Attempts at a task (a failure, or a branch that cannot be integrated) before it is dropped."""
    task_wall_time: float | None = Field(1800.0, gt=0)
    """Seconds one attempt at a task may take."""
    task_max_usd: float | None = Field(None, gt=0)
    """Dollars one task may spend (all its attempts); unlimited when unset."""
    task_max_tokens: int | None = Field(None, ge=1)
    """Tokens one task may spend (all its attempts); unlimited when unset."""
    run_max_usd: float | None = Field(None, gt=0)
    """Dollars the whole run may spend, planner and resolver included; unlimited when unset."""
    run_max_tokens: int | None = Field(None, ge=1)
    """Tokens the whole run may spend; unlimited when unset."""
    run_wall_time: float | None = Field(None, gt=0)
    """Seconds the whole run may take before no further model call is made."""
    leases: bool = True
    """Agents claim a file outside their write-set before editing it; a claim on a file another running task
    owns or holds waits for that task to finish, then brings its integrated work into the worktree, so the
    two edits are made one after the other instead of conflicting."""
    lease_wait: float = Field(300.0, ge=0)
    """Seconds a claim waits for the task holding a file before it is refused (0: refused at once)."""
    shared_files: list[str] = ["CHANGELOG*", "CHANGES*", "NEWS*", "HISTORY*"]
    """Files (globs) every agent may edit without a claim, at the same time: files each agent adds its own
    entries to, such as a changelog, whose additions the merge keeps side by side."""
    radar_interval: float = Field(5.0, ge=0)
    """Seconds between trial merges of the agents' live work (0 turns the conflict radar off)."""
    worktree_include: list[str] = []
    """Untracked files (globs) copied into each agent's worktree, such as `.env`; `.worktreeinclude` adds more."""
    setup_command: str | None = None
    """A command run in each new worktree before its agent starts, such as `npm ci`."""
    port_block: int = Field(20, ge=1)
    """Ports given to each agent (PLAIT_PORT_BASE..+N) so parallel servers and tests do not collide."""
    include_uncommitted: bool = False
    """Start the run from a snapshot of uncommitted changes instead of HEAD."""
    openai_api_key: SecretStr | None = None
    """Key for `openai:` and `openai-compatible:` models; OPENAI_API_KEY is used when unset."""
    anthropic_api_key: SecretStr | None = None
    """Key for `anthropic:` models; ANTHROPIC_API_KEY is used when unset."""
    prices: dict[str, Price] = {}
    """Extra or overriding prices, USD per million tokens, keyed by full model name."""
    verify_command: str | None = None
    """The command that proves a combined tree (run by bash in the integration worktree); detected when unset."""
    sandbox: SandboxSettings = SandboxSettings()
    """How agents' commands are confined: preset, OS layer, limits, extra rules (`plait sandbox`, `plait policy`)."""
    experts: list[ExpertSpec] = []
    """Persistent experts every parallel run keeps (`[[experts]]` with name, area, brief): each reads its area
    once and answers the agents' questions about it for the whole run."""


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "plait" / "config.toml"


class LayeredSettings(BaseModel):
    """The effective settings and, for each field, the layer it came from."""

    settings: Settings
    sources: dict[str, str]

    def rows(self) -> list[tuple[str, str, str]]:
        """(key, shown value, source) for each setting, secrets masked."""
        out = []
        for name in Settings.model_fields:
            value = getattr(self.settings, name)
            out.append((name, _show(value), self.sources.get(name, "default")))
        return out


def _show(value: object) -> str:
    if isinstance(value, SecretStr):
        raw = value.get_secret_value()
        return "****" + raw[-4:] if len(raw) > 12 else "****"
    if isinstance(value, dict):
        return json.dumps({k: v.model_dump() if isinstance(v, BaseModel) else v for k, v in value.items()})
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_defaults=True) or "{}"
    if isinstance(value, list) and any(isinstance(v, BaseModel) for v in value):
        return json.dumps([v.model_dump(exclude_defaults=True) if isinstance(v, BaseModel) else v for v in value])
    return "" if value is None else str(value)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from exc
    data = data.get("plait", data) if isinstance(data.get("plait"), dict) else data
    for key in data:
        if key not in Settings.model_fields:
            raise UsageError(f"unknown setting '{key}' in {path}; `plait config` lists the known ones")
    return data


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in Settings.model_fields.items():
        raw = env.get(f"PLAIT_{name.upper()}")
        if raw is None:
            continue
        nested = isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        if nested or (
            field.annotation is not None and ("dict" in str(field.annotation) or "list" in str(field.annotation))
        ):
            try:
                out[name] = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise UsageError(f"PLAIT_{name.upper()} must be JSON: {exc.msg}") from exc
        else:
            out[name] = raw
    return out


def load_settings(
    repo: Path | None = None,
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> LayeredSettings:
    """Merge every layer; a bad value names the layer it came from."""
    env = os.environ if env is None else env
    layers: list[tuple[str, dict[str, Any]]] = [("user file " + str(user_config_path(env)), {})]
    layers[0] = (layers[0][0], _read_toml(user_config_path(env)))
    if repo is not None:
        layers.append((f"repo file {repo / '.plait.toml'}", _read_toml(repo / ".plait.toml")))
    layers.append(("env", _from_env(env)))
    layers.append(("flag", {k: v for k, v in (flags or {}).items() if v is not None}))
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for label, values in layers:
        for key, value in values.items():
            if key in ("prices", "sandbox") and isinstance(value, dict):
                merged[key] = {**merged.get(key, {}), **value}
            else:
                merged[key] = value
            sources[key] = "env PLAIT_" + key.upper() if label == "env" else label
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else "?"
        raise UsageError(f"setting '{key}' from {sources.get(key, 'default')}: {first['msg']}") from exc
    return LayeredSettings(settings=settings, sources=sources)


def run_settings(repo: Path, recorded: Mapping[str, Any], flags: Mapping[str, Any] | None = None) -> Settings:
    """The settings to continue a run with: today's, then the run's own values (of keys that still exist), then
    `flags` given on the command line."""
    current = load_settings(repo, flags).settings
    kept = {k: v for k, v in recorded.items() if k in Settings.model_fields}
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    return Settings.model_validate({**current.model_dump(), **kept, **given})
