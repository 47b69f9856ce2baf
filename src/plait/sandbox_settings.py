"""The sandbox's settings: rules for commands, paths and MCP tools, resource limits, the preset and the OS layer.

Pure data, read by the settings and enforced by the workspace's policy (`plait.workspace.policy`) and sandbox. A
command rule checks its examples when it is loaded, with the same parser the policy judges commands with.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from plait.shell_parse import parse

__all__ = ["CommandRule", "Limits", "McpRule", "PathRule", "SandboxSettings", "Verdict"]

Verdict = Literal["allow", "ask", "deny"]
"""What a rule says of an action: allow it, ask the user, or deny it."""


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
