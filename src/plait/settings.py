"""One settings object, layered: defaults < user file < repository file < PLAIT_* env < flags."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, SecretStr, ValidationError, field_validator

from plait._mcp_config import McpServer
from plait._repo_file import narrow
from plait._setting_shown import KEY_ENV, BrokenSetting, did_you_mean, dotted, known_keys, mark_sources, shown
from plait.models.pricing import Price
from plait.plan_model import ExpertSpec
from plait.sandbox_settings import SandboxSettings
from plait.trust import REPO_FILE, TrustState, config_dir, trust_state

__all__ = [
    "BrokenSetting",
    "LayeredSettings",
    "Settings",
    "load_settings",
    "run_settings",
    "settings_to_show",
    "user_config_path",
]


class Settings(BaseModel):
    """Every knob of plait. Each field is also `PLAIT_<NAME>` in the environment and a TOML key.

    A repository's `.plait.toml` may narrow but not widen what the user's own file, the environment and the flags
    allow, unless the user trusts the repository (`plait trust`); `plait._repo_file` lists what widens.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model: str = "openai:gpt-5.1"
    """The model agents use: `openai:NAME`, `anthropic:NAME`, `openai-compatible:NAME@URL`, `scripted:FILE`.
    An untrusted repository's file may name an `openai-compatible` server on this machine only: the server is sent
    OPENAI_API_KEY and every prompt."""
    agent: str = "plait"
    """Who works on each task: `plait` (plait's own tool loop on `model`), `claude-code` (the Claude Code CLI),
    `codex` (the Codex CLI, on `model`'s provider), `opencode` (the OpenCode CLI, on `model`'s OpenAI-compatible
    provider), or `command:TEMPLATE` (any command that edits the worktree;
    `{prompt_file}` and `{worktree}` are filled in).
    A task of a plan file may name its own. See docs/agents.md."""
    max_steps: int = Field(60, ge=1)
    """Model calls an agent may make before it is stopped. This and the other budgets (tokens, attempts, seconds,
    dollars) can be lowered by an untrusted repository's file, not raised."""
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
    instructions_chars: int = Field(8_000, ge=0)
    """Characters of the repository's AGENTS.md and CLAUDE.md files (the root's, and those on the way to a task's
    files) given to each agent, all together; a file cut or left out is named. 0 gives none."""
    request_timeout: float = Field(600.0, gt=0)
    """Seconds a model reply may stay silent (connecting gets at most 10 of them). Replies are streamed, so this
    bounds the wait for the first chunk and between chunks, not the time to write the whole reply."""
    max_retries: int = Field(6, ge=0)
    """Retries of a model call on 429, 5xx, timeouts and connection errors."""
    retry_budget: float = Field(600.0, gt=0)
    """Seconds one model call may take, its attempts and waits together, before it stops retrying; a server asking
    for a longer wait than is left stops it at once. The first attempt always gets its full `request_timeout`."""
    concurrency: int = Field(4, ge=1)
    """Agents that may work at the same time (most APIs rate-limit well before CPUs run out)."""
    split: Literal["auto", "always"] = "auto"
    """auto: a short first call asks whether the task is one agent's (then no planner runs), and the planner's
    split runs only when its estimate says it pays for itself (at most 1.25 times the tokens of one agent, at
    least 1.5 times faster), else the task runs as one agent; always: no first call, the split as the planner
    proposed it."""
    max_attempts: int = Field(2, ge=1)
    """Attempts at a task (a failure, or a branch that cannot be integrated) before it is dropped."""
    max_tasks: int = Field(24, ge=1)
    """Tasks a plan may have: a larger plan goes back to the planner, told this maximum, and a plan file with more
    is refused (each task is an agent, a worktree and a branch)."""
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
    """Untracked files (globs) copied into each agent's worktree, such as `.env`; `.worktreeinclude` adds more.
    Only files inside the checkout are copied, whatever the source; an untrusted repository's absolute or `..`
    globs are also reported and dropped."""
    layered_worktrees: bool = True
    """Each agent's worktree is an overlay mount over one shared checkout of the run, holding only the files the
    agent writes, where plait may mount (as root, or with CAP_SYS_ADMIN); elsewhere, or when off, a full checkout."""
    setup_command: str | None = None
    """A command run in each new worktree before its agent starts, such as `npm ci`. It runs as the agent's
    commands do (same sandbox and preset), so it is taken from an untrusted repository's file as well."""
    port_block: int = Field(20, ge=1)
    """Ports given to each agent (PLAIT_PORT_BASE..+N) so parallel servers and tests do not collide."""
    include_uncommitted: bool = False
    """Start the run from a snapshot of uncommitted changes instead of HEAD; never turned on by an untrusted
    repository's file (the agents would see the user's work in progress)."""
    openai_api_key: SecretStr | None = None
    """Key for `openai:` and `openai-compatible:` models; OPENAI_API_KEY is used when unset. Never taken from an
    untrusted repository's file."""
    anthropic_api_key: SecretStr | None = None
    """Key for `anthropic:` models; ANTHROPIC_API_KEY is used when unset. Never taken from an untrusted
    repository's file."""
    prices: dict[str, Price] = {}
    """Extra or overriding prices, USD per million tokens, keyed by full model name. An untrusted repository's
    file may add prices and raise them, not lower a known one (the dollar budgets would count too little)."""
    verify_command: str | None = None
    """The command that proves a combined tree (run by bash in the integration worktree); detected when unset.
    Taken from an untrusted repository's file too: the detected command runs the repository's own tests, which
    can do whatever this command could."""
    low_confidence_to_llm: bool = False
    """Send a merge resolution of low confidence (a rule that chose the order of two additions) to the LLM rung
    first; the rule's result is kept when that rung cannot resolve it, or is off (`--no-llm`)."""
    sandbox: SandboxSettings = SandboxSettings()
    """How agents' commands are confined: preset, OS layer, limits, extra rules (`plait sandbox`, `plait policy`).
    From an untrusted repository's file only what is stricter: a stricter preset, `network = false`, lower
    limits, `deny` and `ask` rules (added to the user's); no other layer, `allow` rule, passthrough or
    `allow_unsandboxed`."""
    mcp_servers: dict[str, McpServer] = {}
    """MCP servers started for each agent in its sandbox (`[mcp_servers.NAME]` with `command = [...]`, `env`), their
    tools offered as `mcp__NAME__TOOL` where `sandbox.mcp` rules allow them; `.mcp.json` adds more in a trusted
    repository. An untrusted repository's file may only leave out the user's (docs/mcp.md)."""
    experts: list[ExpertSpec] = []
    """Persistent experts every parallel run keeps (`[[experts]]` with name, area, brief): each reads its area
    once and answers the agents' questions about it for the whole run."""
    store: str = ""
    """Where the event log is kept: empty for the SQLite file in the repository's `.git/plait/`, or a PostgreSQL
    URL (`postgresql://USER@HOST/DB`, with the postgres extra) that every machine of a team or cluster can reach.
    A password is best left to `~/.pgpass` or PGPASSWORD; one in the URL is redacted wherever the URL is shown or
    logged. Never taken from an untrusted repository's file (its server would receive every prompt)."""

    backend: Literal["local", "ray"] = "local"
    """Where agents' attempts run: `local` (processes on this machine) or `ray` (tasks on a Ray cluster, with the
    `ray` extra; the event log must then be a PostgreSQL `store` that every node reaches). The planner, scheduler,
    merge queue and gate stay in this process, and only this machine's repository gets branches (docs/ray.md)."""
    ray_address: str = ""
    """The Ray cluster to place attempts on (`HOST:PORT`, or `auto` for the one `ray start` began here); empty
    starts a cluster of this machine alone for the run."""
    task_cpus: float = Field(1.0, gt=0)
    """CPUs an attempt asks its backend for (its agent's tests and builds run there)."""
    task_memory_mb: int = Field(0, ge=0)
    """Memory an attempt asks its backend for, in MiB; 0 asks for none in particular."""

    @field_validator("store")
    @classmethod
    def _store_url(cls, value: str) -> str:
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("takes a postgresql:// URL, or nothing for the SQLite log in .git/plait")
        if re.search(r"(?i)[?&]password=", value):  # only USER:PASSWORD@ is redacted wherever a URL is shown
            raise ValueError("give the password as postgresql://USER:PASSWORD@HOST, or in ~/.pgpass, not as ?password=")
        return value


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "config.toml"


class LayeredSettings(BaseModel):
    """The effective settings and, for each field, the layer it came from."""

    settings: Settings
    sources: dict[str, str]
    """The layer of each field, and of each key below a table (dotted: `sandbox.limits.memory_mb`)."""
    ignored: list[str] = []
    """Keys of the repository's file that were not obeyed (dotted below a table: `sandbox.layer`)."""
    ignored_why: str = ""
    """The file they were in and why they were ignored: it is not trusted, or changed since it was."""
    notice: str = ""
    """One line naming the file and the keys ignored; empty when none was."""
    broken: dict[str, str] = {}
    """Settings (or files) left out because they cannot be taken, with why (see `settings_to_show`)."""

    def rows(self, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
        """(key, shown value, source) for each setting, secrets masked (an unset key shown from the environment
        variable it falls back to), a broken one marked; then each file that could not be read and key ignored."""
        env = os.environ if env is None else env
        out = []
        for name in Settings.model_fields:
            value, source = getattr(self.settings, name), self.sources.get(name, "default")
            if name in self.broken:
                out.append((name, f"BROKEN, not used: {self.broken[name]}", source))
                continue
            if value is None and env.get(KEY_ENV.get(name, "")):
                value, source = SecretStr(env[KEY_ENV[name]]), f"env {KEY_ENV[name]}"
            out.append((name, shown(value), source))
        out += [
            (key, f"BROKEN, not read: {why}", "file")
            for key, why in self.broken.items()
            if key not in Settings.model_fields
        ]
        out += [(f"{key} (ignored)", "not obeyed", self.ignored_why) for key in self.ignored]
        return out


def _read_toml(path: Path, also: tuple[str, ...] = (), omit: Collection[str] = ()) -> dict[str, Any]:
    if str(path) in omit:
        return {}
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise BrokenSetting(f"cannot read config file {path}: {exc}", str(path)) from exc
    data = data.get("plait", data) if isinstance(data.get("plait"), dict) else data
    for key in data:
        if key not in Settings.model_fields and key not in also and key not in omit:
            hint = did_you_mean(key, Settings.model_fields) or "; `plait config` lists the known ones"
            raise BrokenSetting(f"unknown setting '{key}' in {path}{hint}", key)
    return {k: v for k, v in data.items() if k not in omit}


def _from_env(env: Mapping[str, str], omit: Collection[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in Settings.model_fields.items():
        raw = env.get(f"PLAIT_{name.upper()}")
        if raw is None or name in omit:
            continue
        nested = isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        if nested or (
            field.annotation is not None and ("dict" in str(field.annotation) or "list" in str(field.annotation))
        ):
            try:
                out[name] = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise BrokenSetting(f"PLAIT_{name.upper()} must be JSON: {exc.msg}", name) from exc
        else:
            out[name] = raw
    return out


def _merge(merged: dict[str, Any], key: str, value: Any, *, add_rules: bool) -> None:
    """Later wins, except within tables: prices and sandbox (its limits too) are merged key by key, and with
    `add_rules` the sandbox's command and path rules are added to those below instead of replacing them."""
    old = merged.get(key)
    if key not in ("prices", "sandbox") or not isinstance(value, dict) or not isinstance(old, dict):
        merged[key] = value
        return
    new = {**old, **value}
    if isinstance(old.get("limits"), dict) and isinstance(value.get("limits"), dict):
        new["limits"] = {**old["limits"], **value["limits"]}
    for rules in ("commands", "paths", "mcp"):
        if add_rules and isinstance(old.get(rules), list) and isinstance(value.get(rules), list):
            new[rules] = old[rules] + value[rules]
    merged[key] = new


def _validated(merged: dict[str, Any], sources: Mapping[str, str]) -> Settings:
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        key = dotted(loc) or "?"
        source = next((sources[k] for k in (dotted(loc[:i]) for i in range(len(loc), 0, -1)) if k in sources), None)
        source = source or "default"
        top = str(loc[0]) if loc else "?"
        if first["type"] == "extra_forbidden":
            known = known_keys(Settings, loc[:-1])
            takes = f"; {dotted(loc[:-1])} takes {known}" if known else ""
            hint = did_you_mean(str(loc[-1]), known.split(", ")) if known else ""
            raise BrokenSetting(f"unknown setting '{key}' in {source}{takes}{hint}", top) from exc
        raise BrokenSetting(f"setting '{key}' from {source}: {first['msg']}", top) from exc


def _why(state: TrustState, ignored: list[str], path: Path) -> tuple[str, str]:
    """(the source shown by `plait config`, the one line on stderr) for keys of `path` that were ignored."""
    keys = ", ".join(ignored)
    again = f"review it, then `plait trust {shlex.quote(str(path.parent))}`"
    if state == "changed":
        return (
            f"repo file {path}, changed since trusted",
            f"ignored {keys} from {path}: it changed since you trusted this repository; {again} again",
        )
    if state == "trusted":
        return f"repo file {path}", f"ignored {keys} from {path}: only `plait trust` can trust a repository"
    return f"repo file {path}, not trusted", (
        f"ignored {keys} from {path}: an untrusted repository may narrow the sandbox and limits but not widen "
        f"them, nor choose API keys or model servers; {again} to obey it in full"
    )


def _stderr(line: str) -> None:
    print(f"plait: {line}", file=sys.stderr)


def load_settings(
    repo: Path | None = None,
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    report: Callable[[str], None] | None = _stderr,
    omit: Collection[str] = (),
) -> LayeredSettings:
    """Merge every layer; a bad value names the layer it came from.

    Unless the user trusts the repository with its present `.plait.toml` (`plait trust`), only what narrows is
    taken from that file (`plait._repo_file` lists what widens); what was ignored is in the result, and
    `report` (stderr by default, None for silence) is given one line naming the file and the keys. Settings
    named in `omit` (and files whose path is in it) are left out, as if unset.
    """
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    label = "user file " + str(user_config_path(env))
    for key, value in _read_toml(user_config_path(env), omit=omit).items():
        _merge(merged, key, value, add_rules=False)
        mark_sources(sources, (key,), value, label)
    layers: list[tuple[str, dict[str, Any]]] = []
    ignored: list[str] = []
    why = notice = ""
    if repo is not None:
        path = repo / REPO_FILE
        values = _read_toml(path, also=("trusted_repos",), omit=omit)
        refused = ["trusted_repos"] if values.pop("trusted_repos", None) is not None else []
        state = trust_state(repo, env) if values or refused else "trusted"
        if state != "trusted":
            values, ignored = narrow(values, _validated(merged, sources))
        ignored = refused + ignored
        if ignored:
            why, notice = _why(state, ignored, path)
        layers.append((f"repo file {path}", values))
    layers.append(("env", _from_env(env, omit)))
    layers.append(("flag", {k: v for k, v in (flags or {}).items() if v is not None and k not in omit}))
    for label, values in layers:
        for key, value in values.items():
            _merge(merged, key, value, add_rules=label.startswith("repo file"))
            mark_sources(sources, (key,), value, "env PLAIT_" + key.upper() if label == "env" else label)
    settings = _validated(merged, sources)
    if notice and report is not None:
        report(notice)
    return LayeredSettings(settings=settings, sources=sources, ignored=ignored, ignored_why=why, notice=notice)


def settings_to_show(
    repo: Path | None, env: Mapping[str, str] | None = None, report: Callable[[str], None] | None = _stderr
) -> LayeredSettings:
    """The settings as `plait config` shows them, even when some cannot be taken: each broken setting (or file
    that cannot be read) is left out, as if unset, and named in `broken` with why; `report` as for `load_settings`."""
    broken: dict[str, str] = {}
    while True:
        try:
            layered = load_settings(repo, env=env, report=None, omit=broken)
        except BrokenSetting as exc:
            if exc.key in broken:
                raise
            broken[exc.key] = str(exc)
            continue
        layered.broken = broken
        if layered.notice and report is not None:
            report(layered.notice)
        return layered


def run_settings(repo: Path, recorded: Mapping[str, Any], flags: Mapping[str, Any] | None = None) -> Settings:
    """The settings to continue a run with: today's, then the run's own values (of keys that still exist), then
    `flags` given on the command line."""
    current = load_settings(repo, flags, report=None).settings
    # where the log is kept is where this run was found, not a property of the run (its URL was logged redacted)
    kept = {k: v for k, v in recorded.items() if k in Settings.model_fields and k != "store"}
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    return Settings.model_validate({**current.model_dump(), **kept, **given})
