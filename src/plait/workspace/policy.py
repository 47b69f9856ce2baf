"""What agents may do: rules for commands, paths and the network, with `allow`, `ask` or `deny`; the strictest wins.

Rules are a convenience in front of the OS sandbox, not a boundary: a determined command can hide what it runs
from any parser. They give the agent a clear observation early, and the log a record of every decision.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from plait.textsafe import visible
from plait.workspace._presets import PRESETS, SECRET_PATHS
from plait.workspace._shell import parse

__all__ = [
    "Action",
    "Asker",
    "CommandRule",
    "ConsoleAsker",
    "Decision",
    "Limits",
    "McpRule",
    "PathRule",
    "Policy",
    "SandboxSettings",
    "Verdict",
]

Verdict = Literal["allow", "ask", "deny"]
Action = Literal["command", "read", "write", "network", "mcp"]
_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_ALWAYS_WRITABLE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/fd/*", "/dev/tty")


class CommandRule(BaseModel):
    """A verdict for commands matching an argv prefix, a glob or a regex (exactly one of them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    prefix: list[str | list[str]] = []
    """Words a simple command starts with; each a glob, or a list of alternatives: ["git", ["push", "pull"]]."""
    glob: str = ""
    """A glob over a whole simple command, its words joined by spaces: "rm -rf /*"."""
    regex: str = ""
    """A regular expression searched for in the whole command line."""
    name: str = ""
    reason: str = ""
    instead: str = ""
    """What the agent may do instead, told to it when the rule denies."""
    match: list[str] = []
    """Example commands the rule must match, checked when the rule is loaded."""
    not_match: list[str] = []
    """Example commands the rule must not match."""

    @model_validator(mode="after")
    def _check(self) -> CommandRule:
        if sum(bool(x) for x in (self.prefix, self.glob, self.regex)) != 1:
            raise ValueError("a command rule needs exactly one of prefix, glob or regex")
        if self.regex:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"bad regex {self.regex!r}: {exc}") from exc
        for example in self.match:
            if not self.matches(example):
                raise ValueError(f"rule {self.label} does not match its example {example!r}")
        for example in self.not_match:
            if self.matches(example):
                raise ValueError(f"rule {self.label} matches {example!r}, listed under not_match")
        return self

    @property
    def label(self) -> str:
        """The rule's name, or its pattern when it has none."""
        if self.name:
            return self.name
        if self.prefix:
            return " ".join(w if isinstance(w, str) else "[" + "|".join(w) + "]" for w in self.prefix)
        return self.glob or f"/{self.regex}/"

    def _prefix_of(self, argv: tuple[str, ...]) -> bool:
        if len(argv) < len(self.prefix):
            return False
        for word, want in zip(argv, self.prefix, strict=False):
            options = [want] if isinstance(want, str) else want
            if not any(fnmatch.fnmatchcase(word, o) for o in options):
                return False
        return True

    def matches(self, command: str, commands: Sequence[tuple[str, ...]] | None = None) -> bool:
        """Whether the rule applies to a command line (any of its simple commands, for prefix and glob).

        `commands` are the line's simple commands when the caller has parsed it already.
        """
        if self.regex:
            return re.search(self.regex, command) is not None
        if commands is None:
            commands = parse(command).commands
        if self.prefix:
            return any(self._prefix_of(argv) for argv in commands)
        return any(fnmatch.fnmatchcase(" ".join(argv), self.glob) for argv in commands)


class PathRule(BaseModel):
    """A verdict for reading or writing paths matching a glob; `~` and `{worktree}` are expanded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    access: Literal["read", "write"]
    path: str
    name: str = ""
    reason: str = ""

    def expand(self, worktree: Path) -> str:
        """The glob with `~` and `{worktree}` replaced."""
        return str(Path(self.path.replace("{worktree}", str(worktree))).expanduser())

    def matches(self, path: Path, worktree: Path) -> bool:
        """Whether `path` (absolute) is the rule's path or lies below it."""
        pattern = self.expand(worktree).rstrip("/") or "/"
        text = str(path)
        return fnmatch.fnmatchcase(text, pattern) or fnmatch.fnmatchcase(text, pattern.rstrip("/") + "/*")


class McpRule(BaseModel):
    """A verdict for MCP tools whose names (`mcp__<server>__<tool>`) match a glob; no rule: denied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    tool: str = Field(min_length=1)
    """A glob over the tool's full name: "mcp__docs__*" for every tool of the server `docs`."""
    name: str = ""
    reason: str = ""


class Limits(BaseModel):
    """Resource limits on an agent's commands, whatever the sandbox: memory, disk and processes are totals for all
    of the agent's processes at once; CPU time, file size and open files are per process.

    A command that takes an agent over a total is stopped, and the agent is told which limit it hit.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    cpu_seconds: int = Field(900, ge=1)
    """CPU time of each process (RLIMIT_CPU)."""
    memory_mb: int = Field(4096, ge=16)
    """Memory of all the agent's processes together (a memory cgroup, page cache included); each process is also
    held to it alone (RLIMIT_DATA), the only bound where no memory cgroup can be made (`plait sandbox` says)."""
    disk_mb: int = Field(4096, ge=1)
    """Bytes the agent's commands may add to its worktree and its private tmp, all commands together; an agent
    over it may still run commands that add nothing (to delete files)."""
    file_size_mb: int = Field(2048, ge=1)
    """Size of any one file a process writes (RLIMIT_FSIZE)."""
    open_files: int = Field(1024, ge=16)
    processes: int = Field(512, ge=8)
    """Processes the agent's commands may have at once (a pids cgroup; without one a watchdog per command, and
    RLIMIT_NPROC where it binds)."""
    cgroup: bool = True
    """Bound processes and memory with cgroups when this machine lets plait create them."""


class SandboxSettings(BaseModel):
    """How agents' commands are confined: the rule preset, the OS layer, and the limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    preset: Literal["strict", "standard", "trusted"] = "strict"
    """strict: write only the worktree, no network; standard: ask for network and installs; trusted: allow them."""
    layer: Literal["auto", "bwrap", "landlock", "seatbelt", "none"] = "auto"
    """The OS sandbox; auto picks the strongest that works here (`plait sandbox` shows which)."""
    allow_unsandboxed: bool = False
    """Run unattended commands even when no OS sandbox works here (rules and limits only)."""
    network: bool | None = None
    """Allow (true) or forbid (false) the network whatever the preset says."""
    commands: list[CommandRule] = []
    """Extra command rules, added to the preset's (the strictest match still wins)."""
    paths: list[PathRule] = []
    """Extra path rules: `write` + `allow` makes a directory writable, `read` + `deny` hides one, `read` + `allow`
    shows one inside the hidden regions (your home is hidden as a whole: `~/.nvm`, say, for a toolchain)."""
    env_passthrough: list[str] = []
    """Environment variables (globs) passed to commands besides the built-in allow-list (PATH, LANG, LC_*, TERM,
    TZ, USER, SHELL...); nothing else of plait's environment reaches them."""
    mcp: list[McpRule] = []
    """Rules for the tools of configured MCP servers (`mcp_servers`, `.mcp.json`): each is denied unless one
    allows it; `ask` is refused too (MCP tools are not put to the user)."""
    limits: Limits = Limits()


class Decision(BaseModel):
    """A verdict on one action, the rule that decided it and every rule that matched."""

    model_config = ConfigDict(frozen=True)

    action: Action
    subject: str
    verdict: Verdict
    rule: str = ""
    reason: str = ""
    instead: str = ""
    matched: tuple[tuple[str, Verdict], ...] = ()
    """(rule, verdict) for every rule that matched, in the order they are listed."""


class Asker(Protocol):
    """Asks the user to approve an action the policy marked `ask`; True approves."""

    def __call__(self, decision: Decision, agent: str) -> bool: ...


class ConsoleAsker:
    """Asks on the terminal, one question at a time even when several agents ask at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __call__(self, decision: Decision, agent: str) -> bool:
        """Print the question on stderr and read y/N from stdin; no answer (EOF) is a no."""
        with self._lock:
            if sys.stderr.isatty():  # a run left in another window needs the user: the terminal's bell says so
                print("\a", end="", file=sys.stderr, flush=True)
            why = f" ({visible(decision.reason)})" if decision.reason else ""
            subject = visible(decision.subject)  # a command can hide what it is behind CR, ESC or bidi marks
            print(f"plait: agent {visible(agent) or '?'} wants to {decision.action}: {subject}{why}", file=sys.stderr)
            print("allow? [y/N] ", end="", file=sys.stderr, flush=True)
            answer = sys.stdin.readline().strip().lower()
            return answer in ("y", "yes")


def _within(path: Path, roots: Sequence[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _strictest(action: Action, subject: str, hits: list[tuple[str, Verdict, str, str]], default: Decision) -> Decision:
    if not hits:
        return default
    rank = max(_RANK[v] for _, v, _, _ in hits)
    label, verdict, reason, instead = next(h for h in hits if _RANK[h[1]] == rank)
    matched = tuple((h[0], h[1]) for h in hits)
    return Decision(
        action=action, subject=subject, verdict=verdict, rule=label, reason=reason, instead=instead, matched=matched
    )


class Policy:
    """A preset's rules plus the user's, judging commands, paths and the network."""

    def __init__(
        self,
        *,
        commands: list[CommandRule],
        paths: list[PathRule],
        network: Verdict,
        name: str = "custom",
        mcp: Sequence[McpRule] = (),
    ) -> None:
        self.mcp = list(mcp)
        self.commands = commands
        self.paths = paths
        self.network = network
        self.name = name

    @classmethod
    def from_settings(cls, settings: SandboxSettings, preset: str | None = None) -> Policy:
        """The named preset (default: the settings' own) with the settings' extra rules and network override."""
        name = preset or settings.preset
        base = PRESETS[name]
        commands = [CommandRule.model_validate(r) for r in base["commands"]] + list(settings.commands)
        paths = [PathRule(verdict="deny", access="read", path=p, name="secrets") for p in SECRET_PATHS]
        paths += [PathRule.model_validate(r) for r in base["paths"]] + list(settings.paths)
        network: Verdict = base["network"]
        if settings.network is not None:
            network = "allow" if settings.network else "deny"
        return cls(commands=commands, paths=paths, network=network, name=name, mcp=settings.mcp)

    def check_mcp(self, tool: str) -> Decision:
        """The verdict on calling MCP tool `tool`: the strictest matching rule, deny when none matches."""
        hits = [(r.name or r.tool, r.verdict, r.reason, "") for r in self.mcp if fnmatch.fnmatchcase(tool, r.tool)]
        server = tool.split("__")[1] if tool.count("__") >= 2 else "*"
        instead = f'a rule `[[sandbox.mcp]] verdict = "allow", tool = "mcp__{server}__*"` would allow it'
        default = Decision(
            action="mcp", subject=tool, verdict="deny", rule="mcp-default", reason="no rule allows it", instead=instead
        )
        return _strictest("mcp", tool, hits, default)

    def check_command(
        self,
        command: str,
        *,
        cwd: Path | None = None,
        writable: Sequence[Path] = (),
        protected: Sequence[Path] = (),
    ) -> Decision:
        """The verdict on a command line: its rules, and any file it redirects into outside the writable paths.

        Redirections are checked only given `cwd` (the worktree); `writable` adds directories such as a private tmp,
        except for what lies in `protected` ones within them.
        """
        parsed = parse(command)
        hits = [(r.label, r.verdict, r.reason, r.instead) for r in self.commands if r.matches(command, parsed.commands)]
        if cwd is not None:
            for target in parsed.writes:
                path = Path(os.path.normpath(cwd / target))
                if "$" in target or "*" in target or _within(path, writable) and not _within(path, protected):
                    continue
                write = self.check_path("write", path, worktree=cwd)
                if write.verdict != "allow":
                    hits.append((write.rule, write.verdict, f"it writes to {target}: {write.reason}", ""))
        default = Decision(action="command", subject=command, verdict="allow", reason="no rule matched")
        return _strictest("command", command, hits, default)

    def check_path(self, access: Literal["read", "write"], path: Path, *, worktree: Path) -> Decision:
        """The verdict on reading or writing `path`: writes are denied outside the worktree unless a rule allows."""
        path = Path(path).absolute()
        resolved = path.resolve()
        rules = [r for r in self.paths if r.access == access]
        hits = [
            (r.name or r.path, r.verdict, r.reason, "")
            for r in rules
            if r.matches(path, worktree) or r.matches(resolved, worktree)
        ]
        inside = resolved.is_relative_to(worktree.resolve()) or any(
            fnmatch.fnmatchcase(str(path), p) for p in _ALWAYS_WRITABLE
        )
        if access == "write" and not inside:
            allowed = [h for h in hits if h[1] == "allow"]
            if not allowed:
                hits.append(("worktree-only", "deny", "only the worktree is writable", ""))
        return _strictest(access, str(path), hits, Decision(action=access, subject=str(path), verdict="allow"))

    def check_network(self) -> Decision:
        """The verdict on reaching the network at all."""
        state = {"allow": "is allowed", "ask": "needs the user's approval", "deny": "is off"}[self.network]
        return Decision(
            action="network",
            subject="network",
            verdict=self.network,
            rule=f"preset {self.name}",
            reason=f"the network {state} under the {self.name} preset",
            instead="" if self.network == "allow" else "work offline with what is installed and in the repository",
        )

    def _allowed(self, access: Literal["read", "write"], worktree: Path) -> list[Path]:
        """Existing paths that `access` + `allow` rules name (literal paths, not globs)."""
        out = []
        for rule in self.paths:
            if rule.access == access and rule.verdict == "allow" and not any(c in rule.path for c in "*?["):
                path = Path(rule.expand(worktree))
                if path.exists():
                    out.append(path)
        return out

    def writable(self, worktree: Path) -> list[Path]:
        """Existing directories made writable by `write` + `allow` rules (literal paths, not globs)."""
        return self._allowed("write", worktree)

    def readable(self, worktree: Path) -> list[Path]:
        """Existing paths that `read` + `allow` rules show to commands inside the hidden regions (literal paths)."""
        return self._allowed("read", worktree)

    def hidden(self, worktree: Path) -> list[Path]:
        """Existing paths that `read` + `deny` rules hide from commands (globs expanded now)."""
        out: set[Path] = set()
        for rule in self.paths:
            if rule.access != "read" or rule.verdict != "deny":
                continue
            pattern = rule.expand(worktree)
            if any(c in pattern for c in "*?["):
                anchor = Path(pattern).anchor or "/"
                out.update(Path(anchor).glob(str(Path(pattern).relative_to(anchor))))
            elif Path(pattern).exists() or Path(pattern).is_symlink():
                out.add(Path(pattern))
        return sorted(p for p in out if not p.absolute().is_relative_to(worktree.absolute()))
