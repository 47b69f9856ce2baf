"""What agents may do: rules for commands, paths and the network, with `allow`, `ask` or `deny`; the strictest wins.

Rules are a convenience in front of the OS sandbox, not a boundary: a determined command can hide what it runs
from any parser. They give the agent a clear observation early, and the log a record of every decision.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from plait.sandbox_presets import PRESETS, SECRET_PATHS
from plait.sandbox_settings import CommandRule, McpRule, PathRule, SandboxSettings, Verdict
from plait.shell_parse import parse
from plait.textsafe import visible

__all__ = ["Action", "Asker", "ConsoleAsker", "Decision", "Policy"]

Action = Literal["command", "read", "write", "network", "mcp"]
_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_ALWAYS_WRITABLE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/fd/*", "/dev/tty")


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
